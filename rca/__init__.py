"""Analysing incidents: signals, hybrid retrieval, prompts, providers, validation, Slack."""
