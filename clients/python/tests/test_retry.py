"""Which server answers the client asks again for, as the TypeScript helper's serverAskedToRetry reads them."""

import asyncio
import unittest

from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from hotel_booking_client import booking
from hotel_booking_client.booking import RETRY_ATTEMPTS, server_asked_to_retry


def rpc(code: RPCStatusCode, message: str) -> RPCError:
    return RPCError(message, code, b"")


class ServerAskedToRetryTest(unittest.TestCase):
    def test_the_answers_that_ask_again(self) -> None:
        for error in [
            rpc(RPCStatusCode.UNKNOWN, "something went wrong, please retry (2738015394)"),
            rpc(RPCStatusCode.INTERNAL, "Please retry"),
            rpc(
                RPCStatusCode.FAILED_PRECONDITION,
                "Unable to perform workflow execution update due to unexpected workflow task failure.",
            ),
            rpc(RPCStatusCode.UNAVAILABLE, "Workflow was not started: StartDeduped"),
        ]:
            with self.subTest(message=error.message):
                self.assertTrue(server_asked_to_retry(error))

    def test_found_as_a_cause(self) -> None:
        outer = RuntimeError("update failed")
        outer.__cause__ = rpc(RPCStatusCode.UNAVAILABLE, "Workflow was not started: StartDeduped")
        self.assertTrue(server_asked_to_retry(outer))

    def test_everything_else_goes_to_the_caller(self) -> None:
        for error in [
            rpc(RPCStatusCode.UNKNOWN, "something went wrong"),
            rpc(RPCStatusCode.FAILED_PRECONDITION, "workflow is not running"),
            rpc(RPCStatusCode.UNAVAILABLE, "connection refused"),
            rpc(RPCStatusCode.NOT_FOUND, "please retry"),
            WorkflowUpdateFailedError(ApplicationError("please retry")),
            ValueError("please retry"),
        ]:
            with self.subTest(error=repr(error)):
                self.assertFalse(server_asked_to_retry(error))

    def test_retried_a_few_times_then_the_answer_reaches_the_caller(self) -> None:
        calls = []
        booking._RETRY_FIRST_PAUSE_SECONDS = 0.0

        async def always_asks() -> None:
            calls.append(1)
            raise rpc(RPCStatusCode.UNKNOWN, "please retry")

        with self.assertRaises(RPCError):
            asyncio.run(booking._retried_when_asked(always_asks))
        self.assertEqual(len(calls), RETRY_ATTEMPTS)


if __name__ == "__main__":
    unittest.main()
