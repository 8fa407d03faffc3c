import { Lexer, type Token, type Tokens } from "marked";
import type { ComponentChildren } from "preact";
import { useMemo, useState } from "preact/hooks";
import { safeHref } from "../model/safe-link.js";

/**
 * Markdown as a person reads it: paragraphs, headings, lists, tables, quotes, links and code
 * blocks with a Copy button. marked's lexer (GFM) parses; this file renders its tokens to Preact
 * elements, never to an HTML string: raw HTML in the text is shown as the text it is, so nothing
 * an agent writes becomes markup or script (and the page's CSP allows none anyway). Links open
 * in a new tab only for http(s) and mailto; images are never fetched into the page: each is a
 * link the person may click to open it.
 */
export function Markdown(props: { readonly text: string; readonly class?: string }) {
  const tokens = useMemo(() => Lexer.lex(props.text, { gfm: true, breaks: false }), [props.text]);
  return <div class={props.class === undefined ? "markdown" : `markdown ${props.class}`}>{blocks(tokens)}</div>;
}

function blocks(tokens: readonly Token[]): ComponentChildren[] {
  return tokens.map((token, index) => block(token as Tokens.Generic, index));
}

function block(token: Tokens.Generic, key: number): ComponentChildren {
  switch (token.type) {
    case "space":
    case "def":
      return null;
    case "paragraph":
      return <p key={key}>{inline((token as Tokens.Paragraph).tokens)}</p>;
    case "heading": {
      const heading = token as Tokens.Heading;
      // Headings inside a message stay below the page's own (h1, h2): h3 and smaller.
      const Tag = `h${Math.min(6, heading.depth + 2)}` as "h3";
      return <Tag key={key}>{inline(heading.tokens)}</Tag>;
    }
    case "code":
      return <CodeBlock key={key} code={(token as Tokens.Code).text} lang={(token as Tokens.Code).lang ?? ""} />;
    case "blockquote":
      return <blockquote key={key}>{blocks((token as Tokens.Blockquote).tokens)}</blockquote>;
    case "hr":
      return <hr key={key} />;
    case "list": {
      const list = token as Tokens.List;
      const items = list.items.map((item, index) => (
        <li key={index} class={item.task ? "task" : undefined}>
          {item.task && (
            <input
              type="checkbox"
              checked={item.checked === true}
              disabled
              aria-label={item.checked === true ? "done" : "not done"}
            />
          )}
          {item.loose
            ? blocks(item.tokens)
            : item.tokens.map((child, childIndex) => listChild(child as Tokens.Generic, childIndex))}
        </li>
      ));
      return list.ordered ? (
        <ol key={key} start={typeof list.start === "number" ? list.start : undefined}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      );
    }
    case "table": {
      const table = token as Tokens.Table;
      return (
        <div key={key} class="md-table" tabIndex={0} role="region" aria-label="Table (scrolls sideways)">
          <table>
            <thead>
              <tr>
                {table.header.map((cell, index) => (
                  <th key={index} scope="col" class={cell.align === null ? undefined : `align-${cell.align}`}>
                    {inline(cell.tokens)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {table.rows.map((row, rowIndex) => (
                <tr key={rowIndex}>
                  {row.map((cell, index) => (
                    <td key={index} class={cell.align === null ? undefined : `align-${cell.align}`}>
                      {inline(cell.tokens)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    }
    case "html":
      // Raw HTML is text here, never markup.
      return (
        <p key={key} class="md-raw">
          {token.raw}
        </p>
      );
    case "text":
      return <p key={key}>{token.tokens !== undefined ? inline(token.tokens) : token.text}</p>;
    default:
      return <p key={key}>{token.raw}</p>;
  }
}

/** A tight list item's parts: its text inline, nested lists as blocks. */
function listChild(token: Tokens.Generic, key: number): ComponentChildren {
  if (token.type === "text")
    return <span key={key}>{token.tokens !== undefined ? inline(token.tokens) : token.text}</span>;
  return block(token, key);
}

function inline(tokens: readonly Token[] | undefined): ComponentChildren[] {
  return (tokens ?? []).map((token, index) => inlineToken(token as Tokens.Generic, index));
}

function inlineToken(token: Tokens.Generic, key: number): ComponentChildren {
  switch (token.type) {
    case "text":
      return token.tokens !== undefined ? <span key={key}>{inline(token.tokens)}</span> : token.text;
    case "escape":
      return token.text;
    case "strong":
      return <strong key={key}>{inline(token.tokens)}</strong>;
    case "em":
      return <em key={key}>{inline(token.tokens)}</em>;
    case "del":
      return <del key={key}>{inline(token.tokens)}</del>;
    case "codespan":
      return <code key={key}>{token.text}</code>;
    case "br":
      return <br key={key} />;
    case "link": {
      const link = token as Tokens.Link;
      const href = safeHref(link.href);
      if (href === null) return <span key={key}>{inline(link.tokens)}</span>;
      return (
        <a key={key} href={href} target="_blank" rel="noopener noreferrer nofollow" title={link.title ?? href}>
          {inline(link.tokens)}
        </a>
      );
    }
    case "image": {
      const image = token as Tokens.Image;
      const href = safeHref(image.href);
      const label = image.text || "image";
      if (href === null) return <span key={key}>[{label}]</span>;
      // Never loaded into the page: the person opens it, if they want it.
      return (
        <a
          key={key}
          class="md-image"
          href={href}
          target="_blank"
          rel="noopener noreferrer nofollow"
          title={`Opens ${href} in a new tab`}
        >
          image: {label} ({hostOf(href)})
        </a>
      );
    }
    case "html":
      return token.raw;
    default:
      return token.raw;
  }
}

function hostOf(href: string): string {
  try {
    return new URL(href).host || href;
  } catch {
    return href;
  }
}

/** A code block with its language and a Copy button. */
export function CodeBlock(props: { readonly code: string; readonly lang: string }) {
  const [copied, setCopied] = useState<"copied" | "failed" | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.code);
      setCopied("copied");
    } catch {
      setCopied("failed");
    }
    setTimeout(() => setCopied(null), 2_000);
  };
  return (
    <div class="code-block">
      <div class="code-bar">
        <span class="code-lang">{props.lang || "code"}</span>
        <button type="button" class="copy" onClick={() => void copy()}>
          {copied === "copied" ? "Copied" : copied === "failed" ? "Copy failed" : "Copy"}
          <span class="visually-hidden"> {props.lang || "code"} block</span>
        </button>
      </div>
      <pre tabIndex={0}>
        <code>{props.code}</code>
      </pre>
    </div>
  );
}
