#!/usr/bin/env python
"""Django's command-line utility for Rootcause."""

import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    if sys.argv[1:2] == ["run"]:  # `make run` works with zero configuration
        from webapp.instance_secret import provide_for_local_run

        provide_for_local_run()
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    finally:  # a one-shot command leaves no cluster behind that only it used
        if sys.argv[1:2] != ["run"]:  # `make run` stops its own (webapp/supervisor.py)
            from webapp.one_shot import stop_own_cluster

            stop_own_cluster()
