import AuthmockCore
import AuthmockStore
import Foundation
import Synchronization
import Testing

/// A rotation and everything recorded of it commit together or not at all
/// (issue 35, item 5): the store is a real SQLite file, wrapped to count
/// transactions and to fail chosen statements.
struct AtomicIssuingTests {
    let clock = VirtualClock()
    let key = try! SigningKey(secret: "test-secret-key-of-at-least-32-bytes")

    /// A refresh is one transaction: a second one after the rotation (the
    /// token's tail used to be written apart) could fail after the rotation
    /// committed and answer 503 for a refresh that happened.
    @Test func aRefreshIsOneTransaction() async throws {
        let database = try FaultyDatabase()
        let authority = try await TokenAuthority(settings: TokenSettings(), signingKey: key, clock: clock, store: try await SQLTokenStore(database))
        let login = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let before = database.transactions
        let refreshed = try await authority.refresh(try #require(login.refreshToken), clientID: "demo").get()
        #expect(database.transactions - before == 1)
        // The tail shown by the control API is recorded with the token, in that one transaction.
        let snapshot = try await authority.store.snapshot(now: clock.now())
        #expect(snapshot.access.first { $0.id == refreshed.accessTokenID }?.tokenTail == String(refreshed.accessToken.suffix(6)))
    }

    /// A store failure at any statement of a refresh rolls all of it back:
    /// the client's retry with the same refresh token succeeds (it is not a
    /// reuse), and only then is the old token spent.
    @Test(arguments: ["UPDATE authmock_refresh", "INSERT INTO authmock_refresh", "INSERT INTO authmock_access"])
    func aFailedRefreshLeavesNothingBehind(failing statement: String) async throws {
        let database = try FaultyDatabase()
        let authority = try await TokenAuthority(settings: TokenSettings(), signingKey: key, clock: clock, store: try await SQLTokenStore(database))
        let refresh = try #require(try await authority.issue(subject: "alice", clientID: "demo", scope: "read").refreshToken)
        database.failNext(statementStartingWith: statement)
        await #expect(throws: TokenStoreError.self) { try await authority.refresh(refresh, clientID: "demo") }
        let retried = try await authority.refresh(refresh, clientID: "demo")
        #expect((try? retried.get()) != nil, "the retry after a failed refresh was refused: \(retried)")
        #expect(try await authority.refresh(refresh, clientID: "demo") == .failure(.reused))
    }

    /// A sign-in records its access token signed, in one transaction too.
    @Test func aSignInIsOneTransaction() async throws {
        let database = try FaultyDatabase()
        let authority = try await TokenAuthority(settings: TokenSettings(), signingKey: key, clock: clock, store: try await SQLTokenStore(database))
        let before = database.transactions
        let login = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        #expect(database.transactions - before == 1)
        let snapshot = try await authority.store.snapshot(now: clock.now())
        #expect(snapshot.access.first?.tokenTail == String(login.accessToken.suffix(6)))
    }
}

/// SQLite in a temporary file that counts transactions and fails the next
/// statement starting with a given text, once.
final class FaultyDatabase: SQLDatabase {
    private let base: SQLiteDatabase
    private let state = Mutex((transactions: 0, failing: String?.none))
    var name: String { base.name }
    var isShared: Bool { false }
    var transactions: Int { state.withLock { $0.transactions } }

    init() throws {
        base = try SQLiteDatabase(path: FileManager.default.temporaryDirectory.appendingPathComponent("atomic-\(UUID()).db").path)
    }

    func failNext(statementStartingWith prefix: String) {
        state.withLock { $0.failing = prefix }
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> T) async throws -> T {
        state.withLock { $0.transactions += 1 }
        return try await base.transaction { tx in try await body(Faulty(base: tx, owner: self)) }
    }

    /// Consumes the planned failure when `sql` is the statement it names.
    fileprivate func shouldFail(_ sql: String) -> Bool {
        state.withLock { state in
            guard let prefix = state.failing, sql.hasPrefix(prefix) else { return false }
            state.failing = nil
            return true
        }
    }

    private struct Faulty: SQLTransaction {
        let base: any SQLTransaction
        let owner: FaultyDatabase
        func rows(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
            if owner.shouldFail(sql) { throw TokenStoreError("planned failure of: \(sql.prefix(40))") }
            return try await base.rows(sql, binds)
        }
    }
}
