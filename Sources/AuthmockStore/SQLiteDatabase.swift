public import AuthmockCore
import Foundation
import GRDB

/// Token state in one SQLite file, through GRDB (`--state sqlite:PATH`).
/// One process owns the file: transactions are serialized here and by
/// `BEGIN IMMEDIATE`, so a decision's read and write see no other writer.
public final class SQLiteDatabase: SQLDatabase {
    private let queue: DatabaseQueue
    private let gate = TransactionGate()
    public let name: String
    public var isShared: Bool { false }

    public init(path: String) throws(TokenStoreError) {
        var configuration = Configuration()
        // A transaction spans several GRDB accesses (one per statement, each
        // awaited), which GRDB allows only when told to; `gate` keeps them
        // from interleaving.
        configuration.allowsUnsafeTransactions = true
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // WAL and NORMAL sync: a commit survives the process (what a
            // restart needs) without an fsync per refresh.
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw TokenStoreError("sqlite:\(path): cannot open the database: \(Self.describe(error))")
        }
        name = "sqlite:" + path
    }

    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> T) async throws -> T {
        do {
            return try await gate.run { [queue] in
                try await queue.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
                do {
                    let result = try await body(Statements(queue: queue))
                    try await queue.writeWithoutTransaction { try $0.execute(sql: "COMMIT") }
                    return result
                } catch {
                    try? await queue.writeWithoutTransaction { db in
                        if db.isInsideTransaction { try db.execute(sql: "ROLLBACK") }
                    }
                    throw error
                }
            }
        } catch let error as CancellationError {
            throw error
        } catch {
            throw TokenStoreError("\(name): \(Self.describe(error))")
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? error.description }
        return String(describing: error)
    }

    private struct Statements: SQLTransaction {
        let queue: DatabaseQueue

        func rows(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
            try await queue.writeWithoutTransaction { db in
                let arguments = StatementArguments(
                    binds.map { value -> DatabaseValue in
                        switch value {
                        case .null: .null
                        case .text(let text): text.databaseValue
                        case .real(let real): real.databaseValue
                        case .integer(let integer): integer.databaseValue
                        }
                    })
                return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                    row.databaseValues.map { value in
                        switch value.storage {
                        case .null, .blob: .null
                        case .int64(let integer): .integer(integer)
                        case .double(let real): .real(real)
                        case .string(let text): .text(text)
                        }
                    }
                }
            }
        }
    }
}

/// An async mutex: one transaction at a time, in arrival order.
actor TransactionGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        return try await body()
    }
}
