"""Receiving incidents: schema, auth, limits, scrubbing, parsing, grouping, storage, the API."""
