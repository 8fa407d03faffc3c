import type Database from "better-sqlite3";

/** One schema step. Versions only grow; a released migration is never edited. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly up: (db: Database.Database) => void;
}

/**
 * Projection tables keep the columns queries filter on plus the whole record as JSON in
 * `data`, so adding a record field never needs a migration and replay stays a plain upsert.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "event log, projections, receipts, outbox",
    up: (db) => {
      db.exec(`
        CREATE TABLE events (
          sequence INTEGER PRIMARY KEY AUTOINCREMENT,
          type TEXT NOT NULL,
          entity TEXT NOT NULL,
          entity_id TEXT NOT NULL,
          thread_id TEXT,
          command_id TEXT,
          data TEXT NOT NULL,
          created_at TEXT NOT NULL
        );
        CREATE INDEX events_thread ON events(thread_id, sequence);

        CREATE TABLE command_receipts (
          command_id TEXT PRIMARY KEY,
          operation TEXT NOT NULL,
          request_hash TEXT NOT NULL,
          result TEXT NOT NULL,
          first_sequence INTEGER,
          last_sequence INTEGER,
          created_at TEXT NOT NULL
        );

        CREATE TABLE outbox (
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          id TEXT NOT NULL UNIQUE,
          lane TEXT NOT NULL,
          type TEXT NOT NULL,
          payload TEXT NOT NULL,
          status TEXT NOT NULL,
          attempts INTEGER NOT NULL DEFAULT 0,
          available_at INTEGER NOT NULL,
          claimed_at INTEGER,
          last_error TEXT,
          created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL
        );
        CREATE INDEX outbox_pending ON outbox(status, lane, seq);

        CREATE TABLE reactor_offsets (
          name TEXT PRIMARY KEY,
          sequence INTEGER NOT NULL
        );

        CREATE TABLE harness_processes (
          pid INTEGER PRIMARY KEY,
          label TEXT NOT NULL,
          host_pid INTEGER NOT NULL,
          proc_start TEXT,
          started_at TEXT NOT NULL
        );

        CREATE TABLE projects (
          id TEXT PRIMARY KEY, name TEXT NOT NULL, root_path TEXT NOT NULL, created_at TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE TABLE threads (
          id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_thread_id TEXT, relationship TEXT NOT NULL,
          provider_instance_id TEXT NOT NULL, title TEXT NOT NULL, deleted INTEGER NOT NULL, created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX threads_project ON threads(project_id, deleted, created_at);
        CREATE INDEX threads_parent ON threads(parent_thread_id);
        CREATE TABLE runs (
          id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, ordinal INTEGER NOT NULL, status TEXT NOT NULL,
          delegated_task_id TEXT, created_at TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX runs_thread ON runs(thread_id, ordinal);
        CREATE INDEX runs_status ON runs(status);
        CREATE TABLE attempts (
          id TEXT PRIMARY KEY, run_id TEXT NOT NULL, thread_id TEXT NOT NULL, status TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX attempts_run ON attempts(run_id);
        CREATE TABLE items (
          id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, run_id TEXT, position INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE UNIQUE INDEX items_position ON items(thread_id, position);
        CREATE TABLE provider_sessions (
          id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, provider_instance_id TEXT NOT NULL, status TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX provider_sessions_thread ON provider_sessions(thread_id);
        CREATE TABLE runtime_requests (
          id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, run_id TEXT NOT NULL, status TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX runtime_requests_thread ON runtime_requests(thread_id, status);
        CREATE TABLE context_transfers (
          id TEXT PRIMARY KEY, kind TEXT NOT NULL, source_thread_id TEXT NOT NULL, target_thread_id TEXT NOT NULL,
          delegated_task_id TEXT, data TEXT NOT NULL
        );
        CREATE INDEX context_transfers_task ON context_transfers(delegated_task_id, kind);
        CREATE TABLE delegated_tasks (
          id TEXT PRIMARY KEY, parent_thread_id TEXT NOT NULL, parent_run_id TEXT NOT NULL, child_thread_id TEXT NOT NULL,
          root_thread_id TEXT NOT NULL, status TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX delegated_tasks_parent ON delegated_tasks(parent_thread_id);
        CREATE INDEX delegated_tasks_parent_run ON delegated_tasks(parent_run_id, status);
        CREATE INDEX delegated_tasks_root ON delegated_tasks(root_thread_id);
        CREATE UNIQUE INDEX delegated_tasks_child ON delegated_tasks(child_thread_id);
        CREATE TABLE nodes (
          id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, run_id TEXT, data TEXT NOT NULL
        );
      `);
    },
  },
  {
    version: 2,
    name: "MCP credentials and settings",
    up: (db) => {
      db.exec(`
        CREATE TABLE mcp_credentials (
          id TEXT PRIMARY KEY,
          token_hash TEXT NOT NULL UNIQUE,
          kind TEXT NOT NULL,
          provider_session_id TEXT,
          thread_id TEXT,
          data TEXT NOT NULL,
          expires_at INTEGER NOT NULL,
          last_used_at INTEGER NOT NULL,
          revoked_at INTEGER
        );
        CREATE INDEX mcp_credentials_session ON mcp_credentials(provider_session_id);
        CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      `);
    },
  },
  {
    version: 3,
    name: "events by entity",
    // The event streams read a record's previous upsert (what changed, for the public event it
    // makes): without this index, finding that a record has none scans its thread's whole log.
    up: (db) => {
      db.exec("CREATE INDEX events_entity ON events(entity_id, sequence)");
    },
  },
  {
    version: 4,
    name: "scheduled tasks and their triggers",
    up: (db) => {
      db.exec(`
        CREATE TABLE scheduled_tasks (
          id TEXT PRIMARY KEY, project_id TEXT NOT NULL, kind TEXT NOT NULL, enabled INTEGER NOT NULL, created_at TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX scheduled_tasks_project ON scheduled_tasks(project_id, created_at);
        CREATE INDEX scheduled_tasks_due ON scheduled_tasks(enabled, kind);
        CREATE TABLE scheduled_triggers (
          id TEXT PRIMARY KEY, task_id TEXT NOT NULL, scheduled_for TEXT, outcome TEXT NOT NULL, run_id TEXT,
          dedupe_key TEXT, signature_digest TEXT, created_at TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX scheduled_triggers_task ON scheduled_triggers(task_id, created_at);
        CREATE INDEX scheduled_triggers_occurrence ON scheduled_triggers(task_id, scheduled_for);
        CREATE INDEX scheduled_triggers_dedupe ON scheduled_triggers(task_id, dedupe_key, created_at);
        CREATE INDEX scheduled_triggers_signature ON scheduled_triggers(task_id, signature_digest);
        CREATE INDEX scheduled_triggers_run ON scheduled_triggers(run_id);
      `);
    },
  },
  {
    version: 5,
    name: "turn usage and delegation-tree budgets",
    up: (db) => {
      // Figures are columns (not only JSON) so a tree's roll-up is one SUM over an index; the
      // budget check's sums (tokens, dollars) are read from the index alone.
      db.exec(`
        CREATE TABLE turn_usage (
          id TEXT PRIMARY KEY, run_id TEXT NOT NULL, thread_id TEXT NOT NULL, root_thread_id TEXT NOT NULL,
          input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER,
          reasoning_tokens INTEGER, total_tokens INTEGER NOT NULL, cost_usd REAL, cost_basis TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX turn_usage_thread ON turn_usage(thread_id, total_tokens, cost_usd);
        CREATE INDEX turn_usage_run ON turn_usage(run_id);
        CREATE INDEX turn_usage_root ON turn_usage(root_thread_id, total_tokens, cost_usd);
        CREATE TABLE budgets (
          id TEXT PRIMARY KEY, scope TEXT NOT NULL, thread_id TEXT NOT NULL, task_id TEXT, root_thread_id TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX budgets_root ON budgets(root_thread_id);
      `);
    },
  },
  {
    version: 6,
    name: "web UI sessions and sign-in codes",
    // A browser session (or a one-time sign-in code from `switchyard ui`) acts as the client
    // token it was made from, by the token's id; only a hash of its secret is stored.
    up: (db) => {
      db.exec(`
        CREATE TABLE web_sessions (
          id TEXT PRIMARY KEY,
          secret_hash TEXT NOT NULL UNIQUE,
          kind TEXT NOT NULL,
          credential_id TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          expires_at INTEGER NOT NULL,
          last_used_at INTEGER NOT NULL,
          ended_at INTEGER
        );
        CREATE INDEX web_sessions_credential ON web_sessions(credential_id);
      `);
    },
  },
  {
    version: 7,
    name: "reach grants and links",
    // Grants: what another environment may do here, found by the SHA-256 of its link secret
    // (never the secret). Links: the other environments this one may call; their secrets live in
    // 0600 files under the home, not here.
    up: (db) => {
      db.exec(`
        CREATE TABLE reach_grants (
          id TEXT PRIMARY KEY, secret_hash TEXT NOT NULL UNIQUE, for_name TEXT NOT NULL, data TEXT NOT NULL,
          created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, last_used_at INTEGER, revoked_at INTEGER
        );
        CREATE TABLE reach_links (
          id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, data TEXT NOT NULL, created_at INTEGER NOT NULL
        );
      `);
    },
  },
  {
    version: 8,
    name: "reach audit",
    // One row per call across environments, on each side: `direction` 'in' (a linked environment
    // called here, under a grant) or 'out' (this one called a link). Never a secret.
    up: (db) => {
      db.exec(`
        CREATE TABLE reach_audit (
          id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, direction TEXT NOT NULL,
          grant_id TEXT, link_name TEXT, verb TEXT, tool TEXT, outcome TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX reach_audit_at ON reach_audit (at);
      `);
    },
  },
  {
    version: 9,
    name: "reach tasks across environments",
    // On the delegating side (A), one row per task delegated to a linked environment: the parent
    // it belongs to and B's task id, which is also the key of its idempotent receipt
    // (received_at). On the delegated-to side (B), one row per child whose parent is in another
    // environment: its foreign lineage and, once the child's work ends, its result (the durable
    // outbox), kept until A acknowledges it.
    up: (db) => {
      db.exec(`
        CREATE TABLE reach_remote_tasks (
          link_name TEXT NOT NULL, remote_task_id TEXT NOT NULL, parent_thread_id TEXT NOT NULL, data TEXT NOT NULL,
          created_at INTEGER NOT NULL, received_at INTEGER, delivered_at INTEGER,
          PRIMARY KEY (link_name, remote_task_id)
        );
        CREATE INDEX reach_remote_tasks_open ON reach_remote_tasks(link_name, received_at);
        CREATE INDEX reach_remote_tasks_parent ON reach_remote_tasks(parent_thread_id);
        CREATE TABLE reach_foreign_tasks (
          task_id TEXT PRIMARY KEY, grant_id TEXT NOT NULL, child_thread_id TEXT NOT NULL, child_run_id TEXT NOT NULL,
          data TEXT NOT NULL, result TEXT, created_at INTEGER NOT NULL, finished_at INTEGER, acked_at INTEGER
        );
        CREATE INDEX reach_foreign_tasks_outbox ON reach_foreign_tasks(grant_id, finished_at, acked_at);
        CREATE INDEX reach_foreign_tasks_run ON reach_foreign_tasks(child_run_id);
      `);
    },
  },
  {
    version: 10,
    name: "running usage totals per budget scope",
    // What each budget scope's tree used (tokens, priced dollars), kept in the transaction that
    // records each turn's usage, so a budget check reads one row instead of summing its tree.
    // Derived from turn_usage like an index: a scope without a row yet is summed once.
    up: (db) => {
      db.exec(
        "CREATE TABLE budget_totals (scope_id TEXT PRIMARY KEY, tokens INTEGER NOT NULL, cost_usd REAL NOT NULL)",
      );
    },
  },
  {
    version: 11,
    name: "drop the unused events-by-thread index",
    // No query reads events by thread (EXPLAIN QUERY PLAN of each: by sequence, or by entity id
    // through events_entity), yet every append kept this b-tree too: one page write of the six a
    // one-event commit makes.
    up: (db) => {
      db.exec("DROP INDEX IF EXISTS events_thread");
    },
  },
  {
    version: 13,
    name: "indexes for per-thread reads that scanned whole tables",
    // Found by EXPLAIN QUERY PLAN under bench/delegation-scale.bench.js: a child thread's fork
    // transfer (read on every turn start) and a thread's attempts (usage totals, on every
    // delegate_task answer) were full scans, so each delegation cost more the more the store held.
    up: (db) => {
      db.exec(`
        CREATE INDEX context_transfers_target ON context_transfers(target_thread_id, kind);
        CREATE INDEX attempts_thread ON attempts(thread_id, status);
      `);
    },
  },
  {
    version: 16,
    name: "each event points at its record's previous upsert; the events-by-entity index goes",
    // A record's previous upsert (what an event changed) was found through events_entity, a
    // b-tree every append kept up to date: one of the seven pages a one-event commit wrote.
    // Now each projection row holds the sequence of its record's latest event, read as the
    // next event is appended and stored in that event's previous_sequence: the chain replaces
    // the index. Backfilled here through the index, before it is dropped.
    up: (db) => {
      db.exec("ALTER TABLE events ADD COLUMN previous_sequence INTEGER");
      db.exec(`UPDATE events SET previous_sequence = (
        SELECT MAX(p.sequence) FROM events p WHERE p.entity_id = events.entity_id AND p.entity = events.entity AND p.sequence < events.sequence
      )`);
      const tables: readonly (readonly [entity: string, table: string])[] = [
        ["project", "projects"],
        ["thread", "threads"],
        ["run", "runs"],
        ["attempt", "attempts"],
        ["item", "items"],
        ["providerSession", "provider_sessions"],
        ["runtimeRequest", "runtime_requests"],
        ["contextTransfer", "context_transfers"],
        ["delegatedTask", "delegated_tasks"],
        ["node", "nodes"],
        ["turnUsage", "turn_usage"],
        ["budget", "budgets"],
        ["scheduledTask", "scheduled_tasks"],
        ["scheduledTrigger", "scheduled_triggers"],
      ];
      for (const [entity, table] of tables) {
        db.exec(`ALTER TABLE ${table} ADD COLUMN last_sequence INTEGER`);
        db.prepare(
          `UPDATE ${table} SET last_sequence = (SELECT MAX(sequence) FROM events WHERE entity_id = ${table}.id AND entity = ?)`,
        ).run(entity);
      }
      db.exec("DROP INDEX IF EXISTS events_entity");
    },
  },
  {
    version: 17,
    name: "thread listing counts and pages from one index",
    // t3_thread_list counts a project's threads without subagents and pages them newest first.
    // With the relationship only in the table, the count read every thread's row (a project of
    // 10,000 threads: 10,000 row reads per call). The index covers both; it replaces
    // threads_project, its prefix, so a thread upsert keeps as many b-trees as before.
    up: (db) => {
      db.exec(`
        CREATE INDEX threads_listing ON threads(project_id, deleted, created_at, relationship);
        DROP INDEX threads_project;
      `);
    },
  },
  {
    version: 18,
    name: "runtime requests by run",
    // A run's pending requests are read as it ends (to cancel them) and as each request is
    // answered; with only the by-thread index that was a scan of every request ever made.
    up: (db) => {
      db.exec("CREATE INDEX runtime_requests_run ON runtime_requests(run_id, status)");
    },
  },
  {
    version: 19,
    name: "unfinalized tasks and wall-clock budgets as columns, each with a partial index",
    // The wall-clock timer re-arms after every commit that touches a task or a budget, and
    // found the running clocks with json_extract over every task and every budget ever made:
    // a store of 10,000 delegations scanned 10,000 JSON documents per re-arm. As columns, an
    // index holds only the rows that matter, and stays untouched while a row's JSON changes.
    up: (db) => {
      db.exec(`
        ALTER TABLE delegated_tasks ADD COLUMN finalized INTEGER NOT NULL DEFAULT 0;
        UPDATE delegated_tasks SET finalized = json_extract(data, '$.finalizedAt') IS NOT NULL;
        CREATE INDEX delegated_tasks_unfinalized ON delegated_tasks(root_thread_id) WHERE finalized = 0;
        ALTER TABLE budgets ADD COLUMN wall_clock_ms INTEGER;
        UPDATE budgets SET wall_clock_ms = json_extract(data, '$.limits.wallClockMs');
        CREATE INDEX budgets_task_wall_clock ON budgets(task_id) WHERE scope = 'delegated_task' AND wall_clock_ms IS NOT NULL;
      `);
    },
  },
  {
    version: 20,
    name: "web UI sessions bound to their page and origin",
    // A browser sends a session cookie to every server on the same host name, whatever its
    // port; a session now also needs the page secret only the signing-in page holds (its hash
    // here) and answers only at the origin it was made at. Sessions made before cannot be
    // proven that way: they end, and their browsers sign in again.
    up: (db) => {
      db.exec(`
        ALTER TABLE web_sessions ADD COLUMN page_secret_hash TEXT;
        ALTER TABLE web_sessions ADD COLUMN origin TEXT;
      `);
      db.prepare("UPDATE web_sessions SET ended_at = ? WHERE kind = 'session' AND ended_at IS NULL").run(Date.now());
    },
  },
  {
    version: 21,
    name: "scheduled tasks by the credential they run under; triggers by age",
    // Revoking a token pauses the schedules it made, found by this column rather than by
    // json_extract over every task; tasks written before it have no authority (NULL), which
    // the scheduler reads as "unknown" and pauses. Trigger retention prunes by age across
    // every task, deleted ones included.
    up: (db) => {
      db.exec(`
        ALTER TABLE scheduled_tasks ADD COLUMN authority_id TEXT;
        CREATE INDEX scheduled_tasks_authority ON scheduled_tasks(authority_id) WHERE authority_id IS NOT NULL;
        CREATE INDEX scheduled_triggers_created ON scheduled_triggers(created_at);
      `);
    },
  },
  {
    version: 28,
    name: "workspaces: a thread's own worktree or scratch folder and what became of its changes",
    // A parent finds its children's workspaces (target_thread_id), the janitor the ones not yet
    // removed (status), `worktrees list` a project's.
    up: (db) => {
      db.exec(`
        CREATE TABLE workspaces (
          id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, project_id TEXT NOT NULL, target_thread_id TEXT,
          status TEXT NOT NULL, data TEXT NOT NULL, last_sequence INTEGER
        );
        CREATE UNIQUE INDEX workspaces_thread ON workspaces(thread_id);
        CREATE INDEX workspaces_target ON workspaces(target_thread_id) WHERE target_thread_id IS NOT NULL;
        CREATE INDEX workspaces_live ON workspaces(project_id) WHERE status != 'removed';
      `);
    },
  },
  {
    version: 29,
    name: "attempts by provider session; unfinalized tasks by creation",
    // Two reads found these with json_extract: every MCP request of an idle-looking credential
    // asks whether its session has a turn running, and a root thread's wall clock starts at its
    // oldest unfinalized task. As columns a second backend can index them too. The unfinalized
    // tasks' index gains created_at (same name: the wall-clock re-arm reads it as before), so a
    // task upsert keeps as many b-trees as it had.
    up: (db) => {
      db.exec(`
        ALTER TABLE attempts ADD COLUMN provider_session_id TEXT;
        UPDATE attempts SET provider_session_id = json_extract(data, '$.providerSessionId');
        CREATE INDEX attempts_running_session ON attempts(provider_session_id) WHERE status IN ('starting', 'running');
        ALTER TABLE delegated_tasks ADD COLUMN created_at TEXT;
        UPDATE delegated_tasks SET created_at = json_extract(data, '$.createdAt');
        DROP INDEX delegated_tasks_unfinalized;
        CREATE INDEX delegated_tasks_unfinalized ON delegated_tasks(root_thread_id, created_at) WHERE finalized = 0;
      `);
    },
  },
  {
    version: 30,
    name: "reach tasks: what the budget and routing queries filter on, as columns",
    // Each delegation across environments counted its breadth budgets with json_extract over
    // every remote task (and, for the tree, over every parent thread's record), and the
    // delegated-to side parsed every foreign task's JSON in JS; naming an environment by its own
    // id did the same. As columns, each count reads an index of the rows it is about, and a
    // backend without json_extract runs the same named queries. A remote task's tree is its
    // parent thread's, which never changes, so it is copied once from the thread's lineage.
    up: (db) => {
      db.exec(`
        ALTER TABLE reach_remote_tasks ADD COLUMN environment_id TEXT;
        ALTER TABLE reach_remote_tasks ADD COLUMN parent_run_id TEXT;
        ALTER TABLE reach_remote_tasks ADD COLUMN root_thread_id TEXT;
        UPDATE reach_remote_tasks SET
          environment_id = json_extract(data, '$.environmentId'),
          parent_run_id = json_extract(data, '$.parentRunId'),
          root_thread_id = (
            SELECT json_extract(t.data, '$.lineage.rootThreadId') FROM threads t WHERE t.id = reach_remote_tasks.parent_thread_id
          );
        CREATE INDEX reach_remote_tasks_unreceived_run ON reach_remote_tasks(parent_run_id) WHERE received_at IS NULL;
        CREATE INDEX reach_remote_tasks_tree ON reach_remote_tasks(root_thread_id);
        CREATE INDEX reach_remote_tasks_environment ON reach_remote_tasks(environment_id);
        ALTER TABLE reach_foreign_tasks ADD COLUMN parent_environment_id TEXT;
        ALTER TABLE reach_foreign_tasks ADD COLUMN parent_run_id TEXT;
        ALTER TABLE reach_foreign_tasks ADD COLUMN parent_root_thread_id TEXT;
        UPDATE reach_foreign_tasks SET
          parent_environment_id = json_extract(data, '$.parent.environmentId'),
          parent_run_id = json_extract(data, '$.parent.runId'),
          parent_root_thread_id = json_extract(data, '$.parent.rootThreadId');
        CREATE INDEX reach_foreign_tasks_unfinished_parent_run ON reach_foreign_tasks(parent_environment_id, parent_run_id) WHERE finished_at IS NULL;
        CREATE INDEX reach_foreign_tasks_parent_tree ON reach_foreign_tasks(parent_environment_id, parent_root_thread_id);
      `);
    },
  },
  {
    version: 31,
    name: "thread search: full-text indexes over titles and message text",
    // Finding a thread by a word someone remembers: its title, or what was said in it (see
    // SEARCHED_ITEM_KINDS). Each FTS5 table keys its rows by the projection row's rowid. No
    // triggers: ThreadSearchIndex keeps the tables from a watermark (the event sequence they are
    // current through), off the projections' write paths; NULL means "build in bulk at the next
    // catch-up", which is how an existing store's rows get in (the first search, or the
    // server's first tick, builds the index; the migration itself stays quick).
    up: (db) => {
      db.exec(`
        CREATE VIRTUAL TABLE thread_title_search USING fts5(title, tokenize = 'unicode61 remove_diacritics 2');
        CREATE VIRTUAL TABLE item_text_search USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
        CREATE TABLE thread_search_watermark (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          indexed_through INTEGER
        );
        INSERT INTO thread_search_watermark (id, indexed_through) VALUES (1, NULL);
      `);
    },
  },
];

/** Applies every migration newer than the database's version, each in its own transaction. */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): number {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
  );
  const current = (db.prepare("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations").get() as { v: number }).v;
  const newest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  if (current > newest) {
    throw new Error(
      `The database schema is version ${current}, newer than this Switchyard knows (${newest}). Upgrade Switchyard or use another SWITCHYARD_HOME.`,
    );
  }
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (migration.version <= current) continue;
    // IMMEDIATE: another process opening the same home may migrate at the same moment; the
    // write lock taken up front waits for it, where a deferred upgrade would fail at once.
    db.transaction(() => {
      migration.up(db);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
    }).immediate();
  }
  return newest;
}
