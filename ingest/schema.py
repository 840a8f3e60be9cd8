"""The unified incident schema: what a service may POST, in snake_case or camelCase.

Validation here is structural (types, lengths, ranges); parsing the content (traces,
logs, shapes) happens later and never rejects an incident.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    TypeAdapter,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

Short = Annotated[str, Field(max_length=255)]
MAX_MESSAGE = 65_536
MAX_TRACE = 262_144
EVENT_ID = r"^[A-Za-z0-9._:-]+$"


def _in_utc(value: datetime) -> datetime:
    """PostgreSQL refuses UTC offsets past ±15:59 that ISO 8601 and Python allow (±23:59),
    so a zoned time goes on as the same instant in UTC; one with no UTC date (year 1 at
    +01:00) is refused here rather than stored as a year no reader can load."""
    if value.tzinfo is None:
        return value
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("this time has no UTC equivalent in years 1-9999") from None


#: A timestamp from a client, as the same instant in UTC (naive ones are left as sent).
Timestamp = Annotated[datetime, AfterValidator(_in_utc)]


class _In(BaseModel):
    """Accepts both `snake_case` names and their camelCase aliases; unknown keys are ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class FrameIn(_In):
    filename: Annotated[str, Field(max_length=1000)] = ""
    function: Annotated[str, Field(max_length=1000)] = ""
    lineno: Annotated[int, Field(ge=0, le=10_000_000)] | None = None
    module: Annotated[str, Field(max_length=1000)] = ""
    in_app: bool | None = None
    context_line: Annotated[str, Field(max_length=2000)] = ""
    vars: dict[str, Any] | None = None


class ExceptionIn(_In):
    type: Short = ""
    # Where the type lives, when it is not part of its name: a .NET assembly, a Go package.
    module: Short | None = None
    message: Annotated[str, Field(max_length=MAX_MESSAGE)] = ""
    frames: Annotated[list[FrameIn], Field(max_length=500)] = []
    relation: Annotated[str, Field(pattern="^(cause|context)$")] | None = None


class ShapeDiffIn(_In):
    tensor: Short | None = None
    op: Short = ""
    expected: Annotated[list[int | None], Field(max_length=16)]
    actual: Annotated[list[int | None], Field(max_length=16)]


class InferenceContextIn(_In):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    model_id: Short = ""
    model_version: Short = ""
    input_hash: Short = ""
    quantization: Short = ""
    batch_size: Annotated[int, Field(ge=0)] | None = None
    seq_len: Annotated[int, Field(ge=0)] | None = None
    device: Short = ""
    framework: Short = ""
    framework_version: Short = ""


class ResourceImpactIn(_In):
    cpu_peak_percent: Annotated[float, Field(ge=0, le=100_000)] | None = None
    memory_delta_mb: float | None = Field(None, alias="memoryDeltaMB")
    gpu_memory_used_mb: float | None = Field(None, ge=0, alias="gpuMemoryUsedMB")
    gpu_util_percent: Annotated[float, Field(ge=0, le=100)] | None = None


TagValue = Annotated[str, Field(max_length=1000)] | int | float | bool | None
LogItem = Annotated[str, Field(max_length=20_000)] | dict[str, Any]


class IncidentIn(_In):
    service: Annotated[str, Field(min_length=1, max_length=200)]
    environment: Annotated[str, Field(max_length=100)] = ""
    event_id: Annotated[str, Field(min_length=1, max_length=64, pattern=EVENT_ID)] | None = None
    occurred_at: Timestamp | None = None
    error_type: Short = ""
    message: Annotated[str, Field(max_length=MAX_MESSAGE)] = ""
    stacktrace: (
        Annotated[str, Field(max_length=MAX_TRACE)]
        | Annotated[list[ExceptionIn], Field(max_length=50)]
        | Annotated[list[FrameIn], Field(max_length=500)]
        | None
    ) = None
    logs: (
        Annotated[list[LogItem], Field(max_length=1000)]
        | Annotated[str, Field(max_length=MAX_TRACE)]
        | None
    ) = None
    shape_diff: Annotated[list[ShapeDiffIn], Field(max_length=64)] | None = None
    inference_context: InferenceContextIn | None = None
    resource_impact: ResourceImpactIn | None = None
    tags: Annotated[
        dict[Annotated[str, Field(max_length=100)], TagValue], Field(max_length=100)
    ] = {}
    fingerprint: Annotated[list[Short], Field(max_length=20)] | Short | None = None

    @model_validator(mode="after")
    def _says_what_failed(self) -> IncidentIn:
        if not (self.error_type.strip() or self.message.strip() or self.stacktrace):
            raise ValueError("give at least one of error_type, message or stacktrace")
        return self

    def payload(self) -> dict[str, Any]:
        """Plain data in snake_case, without the fields the client did not send."""
        return self.model_dump(exclude_none=True, exclude_unset=False)


class _DocumentedAsIncidents:
    """Shows `list[IncidentIn]` in the OpenAPI document for a field validated as `list[Any]`."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        documented = handler(TypeAdapter(list[IncidentIn]).core_schema)
        return {**documented, "minItems": 1}


class BatchIn(BaseModel):
    """Many incidents in one request, each checked on its own: a bad one refuses only itself."""

    incidents: Annotated[list[Any], Field(min_length=1), _DocumentedAsIncidents]
