import { gunzipSync } from "node:zlib";

/** Connect's envelope flag for a compressed message. */
const FLAG_COMPRESSED = 0x01;
/** Connect's envelope flag for the end-of-stream message (JSON, with an error when the call failed). */
const FLAG_END_STREAM = 0x02;

/** One envelope of a Connect streaming body: `[flags u8][length u32 BE][data]`. */
export function envelope(data: Uint8Array, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(data.length, 1);
  return Buffer.concat([head, data]);
}

/** A Connect error detail: a protobuf message by its type name, base64 without padding. */
export interface ConnectErrorDetail {
  readonly type: string;
  readonly value: Uint8Array;
}

/** The end-of-stream envelope: `{}` for success, `{"error":{code,message,details}}` for a failed call. */
export function endOfStream(error?: {
  readonly code: string;
  readonly message: string;
  readonly details?: readonly ConnectErrorDetail[];
}): Buffer {
  const json =
    error === undefined
      ? {}
      : {
          error: {
            code: error.code,
            message: error.message,
            ...(error.details !== undefined
              ? {
                  details: error.details.map((detail) => ({
                    type: detail.type,
                    value: Buffer.from(detail.value).toString("base64").replace(/=+$/, ""),
                  })),
                }
              : {}),
          },
        };
  return envelope(Buffer.from(JSON.stringify(json)), FLAG_END_STREAM);
}

/** The messages of a Connect streaming request body (gunzipped when the client compressed them). */
export function readEnvelopes(body: Buffer): Buffer[] {
  const messages: Buffer[] = [];
  for (let offset = 0; offset + 5 <= body.length;) {
    const flags = body[offset]!;
    const length = body.readUInt32BE(offset + 1);
    const data = body.subarray(offset + 5, offset + 5 + length);
    offset += 5 + length;
    if ((flags & FLAG_END_STREAM) !== 0) continue;
    messages.push((flags & FLAG_COMPRESSED) !== 0 ? gunzipSync(data) : Buffer.from(data));
  }
  return messages;
}
