public import AuthmockCore
import Foundation
public import Logging

/// Where `--state` says token state lives (docs/state.md).
public enum StateLocation: Sendable, Equatable, CustomStringConvertible {
    case memory
    case sqlite(path: String)
    case postgres(url: String)

    /// `memory`, `sqlite:PATH` or `postgres://...` (also `postgresql://`).
    public init(parsing text: String) throws(SettingsError) {
        if text == "memory" {
            self = .memory
        } else if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw SettingsError("--state sqlite:PATH needs a file path, e.g. sqlite:./authmock.db") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(url: text)
        } else {
            throw SettingsError("--state must be memory, sqlite:PATH or postgres://USER@HOST:PORT/DATABASE, got \(text)")
        }
    }

    public var description: String {
        switch self {
        case .memory: "memory"
        case .sqlite(let path): "sqlite:" + path
        case .postgres(let url): Self.withoutPassword(url)
        }
    }

    /// `url` with its password shown as `***` (banners, errors, logs).
    public static func withoutPassword(_ url: String) -> String {
        guard var parts = URLComponents(string: url), parts.password != nil else { return url }
        parts.password = "***"
        return parts.string ?? url
    }

    /// Opens the store, creating its tables (named `tablePrefix...`) when missing.
    public func open(logger: Logger, tablePrefix: String = "authmock_") async throws -> any TokenStore {
        try await openSQL(logger: logger, tablePrefix: tablePrefix) ?? MemoryTokenStore()
    }

    /// The SQL store of a database location; nil for `memory`.
    /// `patience`: PostgreSQL's deadline in seconds when the URL sets none.
    public func openSQL(logger: Logger, tablePrefix: String = "authmock_", patience: Double = 1) async throws -> SQLTokenStore? {
        switch self {
        case .memory: return nil
        case .sqlite(let path): return try await SQLTokenStore(SQLiteDatabase(path: path), tablePrefix: tablePrefix)
        case .postgres(let url):
            let database = try PostgresDatabase(url: url, logger: logger, defaultTimeout: patience)
            try await database.checkReachable()
            return try await SQLTokenStore(database, tablePrefix: tablePrefix)
        }
    }
}
