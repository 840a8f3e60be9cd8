"""OpenTelemetry's way in: OTLP/HTTP logs and traces whose exceptions become incidents."""
