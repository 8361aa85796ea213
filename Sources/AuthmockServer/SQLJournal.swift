import AuthmockCore
import AuthmockModel
import Foundation
import Logging
import Synchronization

/// The journal of a PostgreSQL store (docs/state.md): one table every
/// replica on the database writes, so a test steering a cluster reads one
/// journal in one order. Sequence numbers come from a database sequence at
/// arrival, so `seq` orders requests across replicas the way a single
/// server orders its own. The table is bounded like the in-memory journal
/// (`journal_limit` entries, `journal_max_bytes` of stored JSON): each
/// replica trims it after every 1 % of either bound it has written, and the
/// rows trimmed are counted in one shared `dropped`.
final class SQLJournal: JournalStore {
    private let db: any SQLDatabase
    private let logger: Logger
    private let capacity: Int
    private let maxBytes: Int
    private let statements: Statements
    /// What this replica wrote since it last trimmed the table.
    private let sinceTrim = Mutex((entries: 0, bytes: 0))
    /// Entries this replica could not write (the database failed): dropped.
    private let lost = Atomic<Int>(0)
    let location: String

    /// Creates the table and its sequence when missing (replicas starting
    /// together may race on the catalog, so it tries a few times).
    init(_ db: any SQLDatabase, tablePrefix: String, capacity: Int, maxBytes: Int, logger: Logger) async throws {
        self.db = db
        self.logger = logger
        self.capacity = max(1, capacity)
        self.maxBytes = max(1, maxBytes)
        self.statements = Statements(prefix: tablePrefix)
        self.location = "table \(tablePrefix)journal in \(db.name), shared by every replica"
        for attempt in 1...5 {
            do {
                try await db.transaction { [statements] tx in
                    for statement in statements.schema { _ = try await tx.rows(statement, []) }
                }
                return
            } catch  where attempt < 5 {
                try await Task.sleep(for: .milliseconds(50 * attempt))
            }
        }
    }

    func nextSequence() async throws -> Int {
        Int(try await db.run(statements.next, []).first?.first?.integer ?? 0)
    }

    func append(_ entry: JournalEntry) async {
        do {
            let json = String(decoding: try JSONEncoder().encode(entry), as: UTF8.self)
            let bytes = json.utf8.count
            let values: [SQLValue] = [
                .integer(Int64(entry.seq)), .text(entry.kind.rawValue), SQLValue(entry.call), .integer(Int64(bytes)), .text(json),
            ]
            // A database too busy for this insert but answering others
            // meanwhile is busy, not down: the insert (idempotent) is tried
            // again, a little later each time, for as long as others are
            // answered, up to 10 s; a burst of a thousand refreshes on three
            // replicas lost 3 entries with one retry. In an outage nothing
            // is answered: the entry is lost at once, keeping its 503s fast.
            let first = ContinuousClock.now
            var tries = 0
            while true {
                let began = ContinuousClock.now
                do {
                    _ = try await db.run(statements.insert, values)
                    break
                } catch  where db.answered(since: began) && ContinuousClock.now - first < .seconds(10) {
                    tries += 1
                    try await Task.sleep(for: .milliseconds(50 * min(tries, 4)))
                }
            }
            let due = sinceTrim.withLock { written in
                written.entries += 1
                written.bytes += bytes
                guard written.entries >= max(1, capacity / 100) || written.bytes >= maxBytes / 100 else { return false }
                written = (0, 0)
                return true
            }
            // A trim that fails is done by a later entry's; the entry is written.
            if due {
                do {
                    _ = try await db.run(statements.trim, [.integer(Int64(capacity)), .integer(Int64(maxBytes))])
                } catch {
                    logger.warning("journal trim failed, left to a later entry: \(error)")
                }
            }
        } catch {
            lost.add(1, ordering: .relaxed)
            logger.error("journal entry \(entry.seq) was not written: \(error)")
        }
    }

    func amend(_ entry: JournalEntry) async {
        do {
            let json = String(decoding: try JSONEncoder().encode(entry), as: UTF8.self)
            _ = try await db.run(statements.amend, [.text(json), .integer(Int64(json.utf8.count)), .integer(Int64(entry.seq))])
        } catch {
            logger.warning("journal entry \(entry.seq) keeps its planned hold: \(error)")
        }
    }

    func entries(_ filter: JournalFilter) async throws -> (entries: [JournalEntry], dropped: Int) {
        let (clause, binds) = Self.matching(filter)
        let rows = try await db.run(statements.select + clause + " ORDER BY seq" + (filter.limit.map { " LIMIT \($0)" } ?? ""), binds)
        let decoder = JSONDecoder()
        let entries = try rows.map { row in
            guard let text = row.first?.text, let entry = try? decoder.decode(JournalEntry.self, from: Data(text.utf8)) else {
                throw TokenStoreError("a row of the shared journal table is not an entry this version of authmock reads")
            }
            return entry
        }
        return (entries, try await dropped())
    }

    func lastSequence() async throws -> Int {
        Int(try await db.run(statements.last, []).first?.first?.integer ?? 0)
    }

    func count(_ filter: JournalFilter) async throws -> Int {
        let (clause, binds) = Self.matching(filter)
        return Int(try await db.run(statements.count + clause, binds).first?.first?.integer ?? 0)
    }

    func usage() async throws -> (entries: Int, bytes: Int) {
        let row = try await db.run(statements.usage, []).first ?? []
        return (Int(row.first?.integer ?? 0), Int(row.dropFirst().first?.integer ?? 0))
    }

    private func dropped() async throws -> Int {
        let stored = try await db.run(statements.dropped, []).first?.first?.text.flatMap { Int($0) } ?? 0
        return stored + lost.load(ordering: .relaxed)
    }

    func reset() async throws {
        try await db.transaction { [statements] tx in
            for statement in statements.reset { _ = try await tx.rows(statement, []) }
        }
        lost.store(0, ordering: .relaxed)
        sinceTrim.withLock { $0 = (0, 0) }
    }

    /// Drops the table and its sequence (the runner's throwaway case servers).
    func discard() async throws {
        try await db.transaction { [statements] tx in
            for statement in statements.discard { _ = try await tx.rows(statement, []) }
        }
    }

    /// `filter` as a WHERE clause: kinds and call are columns of their own.
    private static func matching(_ filter: JournalFilter) -> (String, [SQLValue]) {
        var conditions = ["seq > ?"]
        var binds: [SQLValue] = [.integer(Int64(filter.since ?? 0))]
        if let kinds = filter.kinds {
            guard !kinds.isEmpty else { return (" WHERE FALSE", []) }
            conditions.append("kind IN (" + Array(repeating: "?", count: kinds.count).joined(separator: ", ") + ")")
            binds += kinds.map { .text($0.rawValue) }
        }
        if let call = filter.call {
            conditions.append("call = ?")
            binds.append(.text(call))
        }
        if let through = filter.through {
            conditions.append("seq <= ?")
            binds.append(.integer(Int64(through)))
        }
        return (" WHERE " + conditions.joined(separator: " AND "), binds)
    }

    /// The statements, with this store's table names (PostgreSQL's dialect).
    private struct Statements: Sendable {
        let schema: [String]
        let next, last, insert, amend, select, count, usage, dropped, trim: String
        let reset, discard: [String]

        init(prefix: String) {
            func named(_ sql: String) -> String { sql.replacingOccurrences(of: "authmock_", with: prefix) }
            schema = [
                "CREATE SEQUENCE IF NOT EXISTS authmock_journal_seq",
                "CREATE TABLE IF NOT EXISTS authmock_journal (seq BIGINT PRIMARY KEY, kind TEXT NOT NULL, call TEXT, bytes BIGINT NOT NULL, entry TEXT NOT NULL)",
            ].map(named)
            next = named("SELECT nextval('authmock_journal_seq')")
            last = named("SELECT CAST(coalesce(max(seq), 0) AS BIGINT) FROM authmock_journal")
            // A try the deadline abandoned may still have been written: trying again is a no-op then.
            insert = named("INSERT INTO authmock_journal (seq, kind, call, bytes, entry) VALUES (?, ?, ?, ?, ?) ON CONFLICT (seq) DO NOTHING")
            amend = named("UPDATE authmock_journal SET entry = ?, bytes = ? WHERE seq = ?")
            select = named("SELECT entry FROM authmock_journal")
            count = named("SELECT count(*) FROM authmock_journal")
            usage = named("SELECT count(*), CAST(coalesce(sum(bytes), 0) AS BIGINT) FROM authmock_journal")
            dropped = named("SELECT value FROM authmock_meta WHERE key = 'journal_dropped'")
            // Keeps the newest rows within both bounds (at least one row) and
            // adds what it removed to the shared count, in one statement.
            trim = named(
                """
                WITH ranked AS (SELECT seq, row_number() OVER w AS n, sum(bytes) OVER w AS total FROM authmock_journal WINDOW w AS (ORDER BY seq DESC)), \
                cut AS (SELECT max(seq) AS seq FROM ranked WHERE n > ? OR (total > ? AND n > 1)), \
                gone AS (DELETE FROM authmock_journal WHERE seq <= (SELECT seq FROM cut) RETURNING seq) \
                INSERT INTO authmock_meta (key, value) SELECT 'journal_dropped', CAST(count(*) AS TEXT) FROM gone \
                ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(authmock_meta.value AS BIGINT) + CAST(excluded.value AS BIGINT) AS TEXT)
                """)
            reset = [
                "DELETE FROM authmock_journal", "ALTER SEQUENCE authmock_journal_seq RESTART WITH 1",
                "DELETE FROM authmock_meta WHERE key = 'journal_dropped'",
            ].map(named)
            discard = ["DROP TABLE IF EXISTS authmock_journal", "DROP SEQUENCE IF EXISTS authmock_journal_seq"].map(named)
        }
    }
}
