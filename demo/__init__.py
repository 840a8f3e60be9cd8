"""Small programs that fail the way users' model code fails, for the first-run demo.

`python -m demo` runs each one, catches what it raises and prints the incidents it would
report (real tracebacks, messages and shapes) as JSON; `make run` posts them to the demo
project at first start (`RCA_DEMO=0` skips that). They live outside the Django packages:
only this subprocess imports torch, never the web server or `manage.py run` itself.
"""
