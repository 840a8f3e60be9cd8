"""rootcause_client: report a PyTorch/Keras service's failures to Rootcause, shapes included.

    import rootcause_client
    with rootcause_client.watch(model, service="ranker"):
        model(batch)

Configured by RCA_URL and RCA_API_KEY (or `rootcause_client.init(url, api_key)`).
"""

from rootcause_client.client import default_service, flush, init, report
from rootcause_client.watch import watch

__all__ = ["default_service", "flush", "init", "report", "watch"]
