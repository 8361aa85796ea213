public import AuthmockCore
import Foundation
public import Logging
import NIOSSL
import PostgresNIO

/// Token state in PostgreSQL, through postgres-nio (`--state postgres://...`),
/// shared by every authmock replica pointed at the same database.
/// Decisions lock the rows they read (`FOR UPDATE`); a conflict PostgreSQL
/// reports (deadlock, serialization failure) is retried.
public final class PostgresDatabase: SQLDatabase {
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    private let logger: Logger
    public let name: String
    public var isShared: Bool { true }

    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`.
    public init(url: String, logger: Logger) throws(TokenStoreError) {
        guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme ?? ""),
            let host = parts.host, !host.isEmpty
        else {
            throw TokenStoreError("\(url): expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        }
        let database = parts.path.hasPrefix("/") ? String(parts.path.dropFirst()) : parts.path
        let tls: PostgresClient.Configuration.TLS
        switch parts.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer" {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        case let other: throw TokenStoreError("\(url): sslmode must be disable, prefer or require, got \(other)")
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: parts.port ?? 5432, username: parts.user ?? "postgres", password: parts.password,
            database: database.isEmpty ? nil : database, tls: tls)
        configuration.options.maximumConnections = 16
        // Its background log warns of a lease before run() has started, which
        // is the case of every first statement here; failures reach callers as errors.
        var background = logger
        background.logLevel = .error
        let client = PostgresClient(configuration: configuration, backgroundLogger: background)
        self.client = client
        self.logger = logger
        self.runner = Task { await client.run() }
        var shown = parts
        shown.password = shown.password == nil ? nil : "***"
        self.name = shown.string ?? "postgres"
    }

    deinit { runner.cancel() }

    public func transaction<T: Sendable>(_ body: @Sendable (any SQLTransaction) async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await client.withTransaction(logger: logger) { [logger] connection in
                    try await body(Statements(connection: connection, logger: logger))
                }
            } catch let error as PSQLError where attempt < 20 && Self.isConflict(error) {
                continue
            } catch let error as CancellationError {
                throw error
            } catch {
                throw TokenStoreError("\(name): \(Self.describe(error))")
            }
        }
    }

    public func run(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
        do {
            return try await Statements.collect(client.query(Statements.query(sql, binds), logger: logger))
        } catch let error as CancellationError {
            throw error
        } catch {
            throw TokenStoreError("\(name): \(Self.describe(error))")
        }
    }

    /// Deadlock or serialization failure: PostgreSQL rolled the transaction back; running it again is safe.
    private static func isConflict(_ error: PSQLError) -> Bool {
        ["40001", "40P01"].contains(error.serverInfo?[.sqlState] ?? "")
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            return "\(error.code)"
        }
        return String(describing: error)
    }

    private struct Statements: SQLTransaction {
        let connection: PostgresConnection
        let logger: Logger

        func rows(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
            try await Self.collect(connection.query(Self.query(sql, binds), logger: logger))
        }

        static func query(_ sql: String, _ binds: [SQLValue]) -> PostgresQuery {
            var bindings = PostgresBindings(capacity: binds.count)
            for value in binds {
                switch value {
                case .null: bindings.appendNull()
                case .text(let text): bindings.append(text)
                case .real(let real): bindings.append(real)
                case .integer(let integer): bindings.append(integer)
                }
            }
            return PostgresQuery(unsafeSQL: numbered(sql), binds: bindings)
        }

        static func collect(_ rows: PostgresRowSequence) async throws -> [[SQLValue]] {
            var result: [[SQLValue]] = []
            for try await row in rows {
                result.append(try row.map(value))
            }
            return result
        }

        /// `?` placeholders as PostgreSQL's `$1, $2, ...` (the store's SQL has no `?` in literals).
        static func numbered(_ sql: String) -> String {
            var out = ""
            var index = 0
            for character in sql {
                if character == "?" {
                    index += 1
                    out += "$\(index)"
                } else {
                    out.append(character)
                }
            }
            return out
        }

        static func value(_ cell: PostgresCell) throws -> SQLValue {
            guard cell.bytes != nil else { return .null }
            switch cell.dataType {
            case .float8, .float4, .numeric: return .real(try cell.decode(Double.self))
            case .int8, .int4, .int2: return .integer(try cell.decode(Int64.self))
            case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
            default: return .text(try cell.decode(String.self))
            }
        }
    }
}
