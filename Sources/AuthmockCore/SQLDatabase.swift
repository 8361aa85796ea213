public import Foundation

/// A value bound to or read from SQL: the four kinds the token tables use.
public enum SQLValue: Sendable, Equatable {
    case null
    case text(String)
    case real(Double)
    case integer(Int64)

    public var text: String? { if case .text(let value) = self { value } else { nil } }
    public var real: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }
    public var date: Date? { real.map(Date.init(timeIntervalSince1970:)) }
    public var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .real(let value): Int64(value)
        default: nil
        }
    }
}

extension SQLValue {
    public init(_ text: String?) { self = text.map(SQLValue.text) ?? .null }
    public init(_ date: Date?) { self = date.map { .real($0.timeIntervalSince1970) } ?? .null }
}

/// One open transaction: statements with `?` placeholders, rows as values.
public protocol SQLTransaction: Sendable {
    func rows(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]]
}

/// A database a `SQLTokenStore` keeps its tables in. SQLite (GRDB) and
/// PostgreSQL (postgres-nio) implement it in the AuthmockStore module.
public protocol SQLDatabase: Sendable {
    var name: String { get }
    /// Other processes may share it (PostgreSQL): rows a decision reads are
    /// locked (`SELECT ... FOR UPDATE`), and the clock offset is re-read.
    var isShared: Bool { get }
    /// Runs `body` in one transaction: committed when it returns, rolled
    /// back when it throws. Conflicts the database detects are retried.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> T) async throws -> T
    /// One statement on its own (autocommit), without a transaction's two
    /// extra round trips where the database allows it.
    func run(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]]
    /// The database answered some call after `instant`: a call begun then
    /// that failed met a busy moment, worth one more try, not an outage,
    /// where every try waits out a deadline and a fast 503 matters more.
    func answered(since instant: ContinuousClock.Instant) -> Bool
}

extension SQLDatabase {
    public func answered(since instant: ContinuousClock.Instant) -> Bool { true }

    public func run(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
        try await transaction { try await $0.rows(sql, binds) }
    }
}
