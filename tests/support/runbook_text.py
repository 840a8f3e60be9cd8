"""A small valid runbook as a user would write it, for parser, chunker and metadata tests."""

VALID_RUNBOOK = """---
slug: example-runbook
title: Example failure
failure_class: cuda_oom
frameworks: [pytorch]
signals:
  - 'example failure \\d+'
tags: [example]
---
# Example failure

## Symptoms

- `RuntimeError: example failure 42`

## Diagnosis

Explain the cause.

## Remediation

1. **Do the first thing.** Reason: it works.
2. **Do the second thing.** Reason: it also works.

## Verify

Check it.
"""
