"""The floors of storing an incident: committed one-row INSERTs with psycopg (bench/ingest.py).

`raw`, from one connection, is what the batch path is compared with (issue 19: >= 1.0x);
`durable`, from as many connections as the bench has clients, bounds what the single and
envelope paths could reach if a request were nothing but its durable write.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor


def bench_raw(items: list[dict], threads: int = 1, warm: int = 50) -> float:
    """Committed one-row INSERTs/s into a scratch table, from `threads` connections at once.

    One thread is the batch path's `raw` floor. CLIENTS threads (`durable`) are what the
    single and envelope paths could reach at most if a request were nothing but its durable
    write: concurrent commits share WAL flushes in PostgreSQL, so it says how far this
    disk, at this moment, bounds the paths apart from CPU."""
    import psycopg
    from django.db import connection

    db = connection.settings_dict
    conninfo = f"dbname={db['NAME']} user={db['USER']} host={db['HOST']}"
    if db.get("PORT"):
        conninfo += f" port={db['PORT']}"
    if db.get("PASSWORD"):
        conninfo += f" password={db['PASSWORD']}"
    local, opened = threading.local(), []

    def insert(item: dict) -> None:
        if not hasattr(local, "conn"):
            local.conn = psycopg.connect(conninfo, autocommit=True)
            opened.append(local.conn)
        local.conn.execute("INSERT INTO bench_raw (body) VALUES (%s)", (json.dumps(item),))

    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_raw (id bigserial PRIMARY KEY, body jsonb)")
        conn.execute("TRUNCATE bench_raw")
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(insert, items[:warm]))  # connections
            start = time.perf_counter()
            list(pool.map(insert, items[warm:]))
            elapsed = time.perf_counter() - start
        for each in opened:
            each.close()
        conn.execute("DROP TABLE bench_raw")
    return (len(items) - warm) / elapsed
