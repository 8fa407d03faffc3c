import { exactTime, relativeTime } from "../model/item-display.js";

/** When something happened, relative to now ("5m ago"), with the exact time on hover. */
export function RelativeTime(props: { readonly iso: string; readonly nowMs: number; readonly prefix?: string }) {
  return (
    <time class="when" dateTime={props.iso} title={exactTime(props.iso)}>
      {props.prefix ?? ""}
      {relativeTime(props.iso, props.nowMs)}
    </time>
  );
}
