public import AuthmockCore
import Foundation
public import Logging
import NIOSSL
import NIOPosix
import NIOCore
import PostgresNIO
import Synchronization

/// Token state in PostgreSQL, through postgres-nio (`--state postgres://...`),
/// shared by every authmock replica pointed at the same database.
/// Decisions lock the rows they read (`FOR UPDATE`); a conflict PostgreSQL
/// reports (deadlock, serialization failure) is retried.
///
/// Every call has a deadline (`timeout`, 1 s unless the URL says otherwise):
/// a stopped or frozen database is a `TokenStoreError` (503) within it, never
/// a hang. A transaction the deadline overtakes before its COMMIT is
/// abandoned and rolls back, so a 503 means nothing happened; one whose
/// COMMIT was already sent is waited for (up to `commitPatience`), because
/// only the database's answer says whether it happened.
public final class PostgresDatabase: SQLDatabase {
    private let client: PostgresClient
    let configuration: PostgresClient.Configuration
    private let sslmode: String
    private let runner: Task<Void, Never>
    private let logger: Logger
    public let name: String
    public var isShared: Bool { true }
    /// How long one call may take (`?timeout=SECONDS`).
    public let timeout: Duration
    static let commitPatience: Duration = .seconds(60)
    /// When a call last had the database's answer, in nanoseconds after `epoch`.
    private let lastAnswer = Atomic<Int64>(0)
    private let epoch = ContinuousClock.now

    /// While a call waited out its deadline, others had answers: the
    /// database is busy. In an outage nothing answers.
    public func answered(since instant: ContinuousClock.Instant) -> Bool {
        lastAnswer.load(ordering: .relaxed) > (instant - epoch).nanoseconds
    }

    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require][&timeout=SECONDS]`;
    /// `defaultTimeout` when the URL names none.
    public init(url: String, logger: Logger, defaultTimeout: Double = 1) throws(TokenStoreError) {
        guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme ?? ""),
            let written = parts.host, !written.isEmpty
        else {
            throw TokenStoreError("\(url): expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        }
        // An IPv6 address is written in brackets (`@[::1]:5432`); the resolver takes it without them.
        let host = written.hasPrefix("[") && written.hasSuffix("]") ? String(written.dropFirst().dropLast()) : written
        let database = parts.path.hasPrefix("/") ? String(parts.path.dropFirst()) : parts.path
        let query = { (name: String) in parts.queryItems?.first(where: { $0.name == name })?.value }
        self.name = StateLocation.withoutPassword(url)
        let tls: PostgresClient.Configuration.TLS
        sslmode = query("sslmode") ?? "prefer"
        switch sslmode {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        case let other: throw TokenStoreError("\(name): sslmode must be disable, prefer or require, got \(other)")
        }
        let seconds = query("timeout").map { Double($0) } ?? defaultTimeout
        guard let seconds, seconds.isFinite, seconds >= 0.05, seconds <= 3600 else {
            throw TokenStoreError("\(name): timeout must be a number of seconds from 0.05 to 3600, got \(query("timeout") ?? "")")
        }
        self.timeout = .milliseconds(Int64(seconds * 1000))
        var configuration = PostgresClient.Configuration(
            host: host, port: parts.port ?? 5432, username: parts.user ?? "postgres", password: parts.password,
            database: database.isEmpty ? nil : database, tls: tls)
        configuration.options.maximumConnections = 16
        configuration.options.connectTimeout = max(timeout, .seconds(1))
        self.configuration = configuration
        // Its background log warns of a lease before run() has started, which
        // is the case of every first statement here; failures reach callers as errors.
        var background = logger
        background.logLevel = .error
        let client = PostgresClient(configuration: configuration, backgroundLogger: background)
        self.client = client
        self.logger = logger
        self.runner = Task { await client.run() }
    }

    deinit { runner.cancel() }

    /// Connects once, outside the pool, and says what is wrong in seconds
    /// (refused, unknown host, password, no such database): the pool would
    /// only retry quietly.
    public func checkReachable() async throws(TokenStoreError) {
        do {
            let tls: PostgresConnection.Configuration.TLS =
                switch sslmode {
                case "require": .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                case "prefer": .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
                default: .disable
                }
            var probe = PostgresConnection.Configuration(
                host: configuration.host ?? "", port: configuration.port ?? 5432, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: tls)
            probe.options.connectTimeout = .seconds(5)
            let connection = try await PostgresConnection.connect(configuration: probe, id: 0, logger: logger)
            try? await connection.close()
        } catch {
            throw TokenStoreError("\(name): cannot connect: \(Self.describe(error))")
        }
    }

    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> T) async throws -> T {
        try await withDeadline { [client, logger, name] progress in
            var attempt = 0
            while true {
                attempt += 1
                do {
                    return try await client.withTransaction(logger: logger) { connection in
                        let result = try await body(Statements(connection: connection, logger: logger))
                        // Past this point the COMMIT is sent: the deadline must not abandon it.
                        guard progress.beginCommit() else { throw CancellationError() }
                        return result
                    }
                } catch  where attempt < 20 && Self.isConflict(error) {
                    progress.restart()
                    continue
                } catch let error as CancellationError {
                    throw error
                } catch {
                    throw TokenStoreError("\(name): \(Self.describe(error))")
                }
            }
        }
    }

    public func run(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
        try await withDeadline { [client, logger, name] _ in
            do {
                return try await Statements.collect(client.query(Statements.query(sql, binds), logger: logger))
            } catch let error as CancellationError {
                throw error
            } catch {
                throw TokenStoreError("\(name): \(Self.describe(error))")
            }
        }
    }

    /// `work`'s answer, or a `TokenStoreError` once `timeout` has passed.
    /// The work runs in a task of its own, so a database that does not
    /// answer at all cannot hold the caller past the deadline; the task is
    /// cancelled and ends when the database answers or the connection drops.
    private func withDeadline<T: Sendable>(_ work: @escaping @Sendable (CallProgress) async throws -> T) async throws -> T {
        let progress = CallProgress()
        let answer = FirstAnswer<T>()
        // The worker answers itself; whichever of it and the timer answers first is the answer.
        let worker = Task {
            do {
                let result = try await work(progress)
                self.lastAnswer.store((ContinuousClock.now - self.epoch).nanoseconds, ordering: .relaxed)
                answer.give(.success(result))
            } catch {
                answer.give(.failure(error))
            }
        }
        let timer = Task { [timeout, name] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            if progress.abandon() {
                worker.cancel()
                answer.give(.failure(TokenStoreError("\(name): no answer within \(timeout.secondsText) s")))
                return
            }
            // The COMMIT is under way: its answer is the truth, so wait for it, bounded.
            guard (try? await Task.sleep(for: Self.commitPatience)) != nil else { return }
            answer.give(
                .failure(
                    TokenStoreError("\(name): a COMMIT had no answer within \(Self.commitPatience.secondsText) s; whether it happened is unknown")))
        }
        defer { timer.cancel() }
        return try await answer.wait()
    }

    /// Deadlock or serialization failure: PostgreSQL rolled the transaction back; running it again is safe.
    private static func isConflict(_ error: any Error) -> Bool {
        guard let error = underlying(error) as? PSQLError else { return false }
        return ["40001", "40P01"].contains(error.serverInfo?[.sqlState] ?? "")
    }

    /// The error inside postgres-nio's transaction wrapper: what failed, not where.
    private static func underlying(_ error: any Error) -> any Error {
        guard let wrapped = error as? PostgresTransactionError else { return error }
        return wrapped.beginError ?? wrapped.closureError ?? wrapped.commitError ?? wrapped.rollbackError ?? error
    }

    private static func describe(_ error: any Error) -> String {
        let error = underlying(error)
        if let error = error as? TokenStoreError { return error.description }
        if let error = error as? PSQLError {
            if error.code == .connectionError, let cause = error.underlying { return connectionProblem(cause) }
            if let message = error.serverInfo?[.message] { return message }
            return "\(error.code)"
        }
        return String(describing: error)
    }

    /// "connection refused", "unknown host nohost.invalid": what a person can act on.
    private static func connectionProblem(_ error: any Error) -> String {
        guard let error = error as? NIOConnectionError else { return "\(error)" }
        if error.dnsAError != nil || error.dnsAAAAError != nil { return "unknown host \(error.host)" }
        if let io = error.connectionErrors.last?.error as? IOError {
            return "\(error.host):\(error.port): " + String(cString: strerror(io.errnoCode)).lowercased()
        }
        return "\(error)"
    }

    private struct Statements: SQLTransaction {
        let connection: PostgresConnection
        let logger: Logger

        func rows(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
            // An abandoned transaction (its deadline passed) goes no further: it rolls back.
            try Task.checkCancellation()
            let rows = try await Self.collect(connection.query(Self.query(sql, binds), logger: logger))
            try Task.checkCancellation()
            return rows
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

/// Where one database call is, for its deadline.
final class CallProgress: Sendable {
    private enum Stage { case running, committing, abandoned }
    private let stage = Mutex(Stage.running)

    /// The COMMIT is about to be sent; false when the deadline abandoned the call first.
    func beginCommit() -> Bool {
        stage.withLock { stage in
            guard stage == .running else { return false }
            stage = .committing
            return true
        }
    }

    /// The deadline passed; false when the COMMIT was already sent.
    func abandon() -> Bool {
        stage.withLock { stage in
            guard stage == .running else { return false }
            stage = .abandoned
            return true
        }
    }

    /// A conflict rolled the transaction back; it runs again.
    func restart() {
        stage.withLock { if $0 == .committing { $0 = .running } }
    }
}

/// The first of several answers to one waiting caller; later ones are dropped.
final class FirstAnswer<T: Sendable>: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<T, any Error>)
        case answered(Result<T, any Error>)
        case delivered
    }
    private let state = Mutex(State.pending)

    func give(_ result: Result<T, any Error>) {
        let waiter: CheckedContinuation<T, any Error>? = state.withLock { state in
            switch state {
            case .pending:
                state = .answered(result)
                return nil
            case .waiting(let waiter):
                state = .delivered
                return waiter
            case .answered, .delivered: return nil
            }
        }
        waiter?.resume(with: result)
    }

    /// Waits for the first answer (it may have come already).
    func wait() async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let early: Result<T, any Error>? = state.withLock { state in
                if case .answered(let result) = state {
                    state = .delivered
                    return result
                }
                state = .waiting(continuation)
                return nil
            }
            if let early { continuation.resume(with: early) }
        }
    }
}

extension Duration {
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }

    /// "1", "0.5": seconds as a person writes them.
    var secondsText: String {
        let seconds = Double(components.seconds) + Double(components.attoseconds) / 1e18
        return seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
