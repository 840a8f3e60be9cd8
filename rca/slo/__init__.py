"""SLO rules: per-project conditions over incidents and Alertmanager alerts, and their breaches.

A rule counts what it matches -- incidents within a sliding window, or Alertmanager alerts
firing now -- and is breached while the count is at or above its threshold. A breach is
recorded once (one open `SloBreach` per rule, enforced by the database), told to Slack
once with the words "SLO breach", shown on the timeline, and closed when the count falls
below the threshold, which re-arms the rule.

One idea per module: :mod:`.models` (the tables), :mod:`.defaults` (the rules a project
starts with), :mod:`.matching` (which incidents a rule counts: the query and its pure twin),
:mod:`.evaluate` (open and close breaches), :mod:`.message` (the Slack message and its
notification row), :mod:`.editing` (the settings form's validation) and :mod:`.tasks`
(the periodic evaluation, Celery beat on the housekeeping queue).
"""
