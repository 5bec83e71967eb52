/**
 * The failure converter of encrypted deployments (loaded by path: see dataConverterFor). A failure's
 * message and stack trace move into its encoded attributes, a payload the encryption codec encrypts;
 * history keeps "Encoded failure" in clear. Readers with the keys (clients, the Web UI through the codec
 * server) see the text as it was.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
