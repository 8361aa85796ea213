@testable import AuthmockCore
import AuthmockStore
import Foundation
import Testing

/// The in-memory store keeps no record per access token (`AccessLedger`):
/// a login's older tokens are judged from their claims and the login's
/// cutoffs. The SQLite store still keeps a record of every token, so it is
/// the oracle: the same steps on both, on one virtual clock, must judge
/// every token the same, the ones the memory store no longer lists too.
struct AccessLedgerTests {
    let clock = VirtualClock()
    let key = try! SigningKey(secret: "test-secret-key-of-at-least-32-bytes")

    /// Two authorities that take every step together.
    struct Pair {
        let memory: TokenAuthority
        let recorded: TokenAuthority
        let path: String

        /// Runs `step` on both and returns both results, memory's first.
        func both<T>(_ step: (TokenAuthority) async throws -> T) async throws -> (T, T) {
            (try await step(memory), try await step(recorded))
        }
    }

    func pair(_ settings: TokenSettings) async throws -> Pair {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID()).db").path
        return Pair(
            memory: try await TokenAuthority(settings: settings, signingKey: key, clock: clock),
            recorded: try await TokenAuthority(
                settings: settings, signingKey: key, clock: clock, store: try await SQLTokenStore(try SQLiteDatabase(path: path))),
            path: path)
    }

    func remove(_ pair: Pair) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: pair.path + suffix) }
    }

    static func verdict(_ verification: AccessVerification) -> String {
        switch verification {
        case .valid: "valid"
        case .invalid(let failure, _): failure.rawValue
        }
    }

    /// Every token of both lists judged now, pairwise: the same verdicts.
    func expectSameVerdicts(
        _ pair: Pair, _ tokens: [(String, String)], _ when: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for (index, (memory, recorded)) in tokens.enumerated() {
            let mine = Self.verdict(try await pair.memory.verifyAccessToken(memory))
            let oracle = Self.verdict(try await pair.recorded.verifyAccessToken(recorded))
            #expect(mine == oracle, "token \(index) \(when): memory says \(mine), the recorded store \(oracle)", sourceLocation: sourceLocation)
        }
    }

    @Test func everyTokenIsJudgedAsARecordWouldJudgeIt() async throws {
        // Hour-long tokens, refreshed every 0.37 s of the clock (a fraction of a second: exact expiries matter).
        var settings = TokenSettings(accessTTL: 3600, refreshTTL: 86_400)
        settings.pruneAfterSeconds = 0
        let pair = try await pair(settings)
        defer { remove(pair) }
        var tokens: [(String, String)] = []
        let (aliceM, aliceR) = try await pair.both { try await $0.issue(subject: "alice", clientID: "demo", scope: "read") }
        let (bobM, bobR) = try await pair.both { try await $0.issue(subject: "bob", clientID: "demo", scope: "read") }
        let (machineM, machineR) = try await pair.both { try await $0.issueWithoutRefresh(subject: "demo", clientID: "demo", scope: "read") }
        tokens += [(aliceM.accessToken, aliceR.accessToken), (bobM.accessToken, bobR.accessToken), (machineM.accessToken, machineR.accessToken)]
        var refresh = (aliceM.refreshToken!, aliceR.refreshToken!)
        func refreshAlice(_ times: Int) async throws {
            for _ in 0..<times {
                clock.advance(seconds: 0.37)
                let memory = try await pair.memory.refresh(refresh.0, clientID: "demo").get()
                let recorded = try await pair.recorded.refresh(refresh.1, clientID: "demo").get()
                refresh = (memory.refreshToken!, recorded.refreshToken!)
                tokens.append((memory.accessToken, recorded.accessToken))
            }
        }
        try await refreshAlice(AccessLedger.recentLimit + 8)
        try await expectSameVerdicts(pair, tokens, "after the refreshes")
        #expect(try await pair.memory.snapshot().access.count == AccessLedger.recentLimit + 2, "a login lists its latest tokens only")

        // Single tokens: an old one (no record kept) and a listed one, each by `jti`.
        for index in [3, tokens.count - 1] {
            let (memoryJTI, recordedJTI) = try await pair.both { authority in
                try #require(await authority.signedClaims(authority === pair.memory ? tokens[index].0 : tokens[index].1)).jti.value
            }
            let changed = try await (
                pair.memory.revoke(TokenSelector(kind: .access, jti: memoryJTI)), pair.recorded.revoke(TokenSelector(kind: .access, jti: recordedJTI))
            )
            #expect(changed.0 == changed.1)
        }
        try await expectSameVerdicts(pair, tokens, "after revoking two tokens by jti")

        // The whole login expired, then new tokens: the cutoff reaches exactly the tokens before it.
        let expired = try await pair.both { try await $0.expire(TokenSelector(kind: .access, subject: "alice")) }
        #expect(expired.0.access <= expired.1.access, "memory counts the tokens it lists")
        let beforeCutoff = tokens.count
        try await refreshAlice(AccessLedger.recentLimit + 3)
        try await expectSameVerdicts(pair, tokens, "after a login-wide expiry and more refreshes")
        #expect(Self.verdict(try await pair.memory.verifyAccessToken(tokens[beforeCutoff].0)) == "valid")

        // Header rotation's supersession: every other token of the login expires after the grace.
        let keep = try await pair.both { authority in
            try #require(await authority.signedClaims(authority === pair.memory ? tokens.last!.0 : tokens.last!.1))
        }
        try await pair.memory.supersedeAccessTokens(family: aliceM.familyID!, keep: TokenID(keep.0.jti.value), graceSeconds: 5)
        try await pair.recorded.supersedeAccessTokens(family: aliceR.familyID!, keep: TokenID(keep.1.jti.value), graceSeconds: 5)
        clock.advance(seconds: 4.9)
        try await expectSameVerdicts(pair, tokens, "inside the supersession's grace")
        clock.advance(seconds: 0.2)
        try await refreshAlice(AccessLedger.recentLimit + 1)
        try await expectSameVerdicts(pair, tokens, "after it, the kept token no longer listed")

        // Revoking the other login's and the client's tokens, and the clock to each token's own exp.
        _ = try await pair.both { try await $0.revoke(TokenSelector(kind: .access, subject: "bob")) }
        try await expectSameVerdicts(pair, tokens, "after revoking bob's access tokens")
        clock.advance(seconds: 3600 - 0.37 * Double(tokens.count) - 10)
        for _ in 0..<40 {
            clock.advance(seconds: 0.37)
            try await expectSameVerdicts(pair, tokens, "as the tokens reach their exp, at \(clock.now().timeIntervalSince1970)")
        }
    }

    /// A login refreshed at full rate with hour-long tokens keeps a bounded
    /// number of records: memory follows logins, not issued tokens.
    @Test func hourLongTokensAtFullRateKeepABoundedState() async throws {
        var settings = TokenSettings(accessTTL: 3600, refreshTTL: 86_400)
        settings.pruneAfterSeconds = 10
        let authority = try await TokenAuthority(settings: settings, signingKey: key, clock: clock)
        var refresh = try #require(try await authority.issue(subject: "alice", clientID: "demo", scope: "read").refreshToken)
        var first = ""
        for second in 0..<60 {
            for _ in 0..<200 {
                let issued = try await authority.refresh(refresh, clientID: "demo").get()
                refresh = try #require(issued.refreshToken)
                if first.isEmpty { first = issued.accessToken }
            }
            clock.advance(seconds: 1)
            if second >= 20 {
                let snapshot = try await authority.snapshot()
                #expect(snapshot.access.count <= AccessLedger.recentLimit + 1, "access records at \(second) s: \(snapshot.access.count)")
            }
        }
        // The first of 12,000 tokens, an hour-long one no record is kept of, is still valid.
        #expect(Self.verdict(try await authority.verifyAccessToken(first)) == "valid")
    }
}
