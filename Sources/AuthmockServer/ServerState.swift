public import AuthmockCore
public import Logging

/// Where a server keeps its token state and its journal. Whoever starts the
/// server opens them (`authmock serve` and the runner's case servers, from
/// `--state`), so this module links no database driver: as swift-nio keeps
/// its event loops out of NIOCore, the server takes a store it did not make.
public struct ServerState: Sendable {
    public let store: any TokenStore
    public let journal: any JournalStore

    public init(store: any TokenStore, journal: any JournalStore) {
        self.store = store
        self.journal = journal
    }

    /// Tokens and journal in this process (`--state memory`, the default).
    public static func memory(_ options: ServerOptions) -> ServerState {
        ServerState(store: MemoryTokenStore(), journal: MemoryJournal(capacity: options.journalLimit, maxBytes: options.journalMaxBytes))
    }

    /// Tokens in a SQL database. Replicas sharing one database (PostgreSQL)
    /// share the journal too; a file of one process (SQLite) keeps its own.
    public static func sql(_ store: SQLTokenStore, options: ServerOptions, logger: Logger) async throws -> ServerState {
        guard store.isShared else {
            return ServerState(store: store, journal: MemoryJournal(capacity: options.journalLimit, maxBytes: options.journalMaxBytes))
        }
        let journal = try await SQLJournal(
            store.db, tablePrefix: store.tablePrefix, capacity: options.journalLimit, maxBytes: options.journalMaxBytes, logger: logger)
        return ServerState(store: store, journal: journal)
    }
}
