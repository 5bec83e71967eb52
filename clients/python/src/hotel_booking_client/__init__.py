"""Python client for the hotel booking orchestrator: its payload encryption and its booking start rules."""

from .booking import (
    DEFAULT_TASK_QUEUE,
    WORKFLOW_TYPE,
    BookingRequest,
    Guest,
    Holder,
    Money,
    await_outcome,
    connect,
    new_reference,
    start_booking,
    workflow_id,
)
from .codec import EncryptionCodec, EncryptionConfigError, UnknownEncryptionKeyError, data_converter_from_env

__all__ = [
    "BookingRequest",
    "DEFAULT_TASK_QUEUE",
    "EncryptionCodec",
    "EncryptionConfigError",
    "Guest",
    "Holder",
    "Money",
    "UnknownEncryptionKeyError",
    "WORKFLOW_TYPE",
    "await_outcome",
    "connect",
    "data_converter_from_env",
    "new_reference",
    "start_booking",
    "workflow_id",
]
