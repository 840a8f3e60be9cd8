"""Pure translation of what the official Sentry SDKs send into Rootcause's incident payload."""
