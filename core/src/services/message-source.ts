/** The thread a message between threads came from, as the receiving agent is told. */
export interface MessageSource {
  readonly threadId: string;
  /** The link agents mention the thread by (`switchyard-thread://v2/<environmentId>/<threadId>`). */
  readonly link: string;
  /** The sender's title when the message was sent. */
  readonly title: string;
}

/** The tag around the sender header at the start of a message another thread's agent sent. */
export const MESSAGE_SOURCE_TAG = "switchyard_message_source";

/**
 * The text an agent receives for a message another thread's agent sent: a tagged header naming
 * the sender (link and title, and the id to reply to), then the message. Without it a peer's
 * message reads as if the user had written it. The reply instruction is left out when the
 * sender asks (a coordinator that waits on the thread itself wants no reply). The header is
 * context the host adds, like folded instructions, so it is tagged the same way and the
 * message itself stays apart.
 */
export function withSourceHeader(text: string, source: MessageSource, replyToSource: boolean): string {
  const from = `From thread "${source.title}" ${source.link} (threadId ${source.threadId}), sent with t3_thread_send.`;
  const reply = replyToSource ? ` To reply, call t3_thread_send with threadId "${source.threadId}".` : "";
  return `<${MESSAGE_SOURCE_TAG}>\n${from}${reply}\n</${MESSAGE_SOURCE_TAG}>\n\n${text}`;
}
