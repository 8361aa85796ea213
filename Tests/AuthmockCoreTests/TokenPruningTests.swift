@testable import AuthmockCore
import AuthmockStore
import Foundation
import Testing

/// Pruning keeps a long-running server's token state bounded, and a client
/// presenting a pruned token gets the answer it would have got before.
struct TokenPruningTests {
    let clock = VirtualClock()
    let key = try! SigningKey(secret: "test-secret-key-of-at-least-32-bytes")

    func authority() async -> TokenAuthority {
        var settings = TokenSettings(accessTTL: 1, refreshTTL: 5)
        settings.pruneAfterSeconds = 5
        return try! await TokenAuthority(settings: settings, signingKey: key, clock: clock)
    }

    func records(_ authority: TokenAuthority) async throws -> Int {
        let snapshot = try await authority.snapshot()
        return snapshot.access.count + snapshot.refresh.count + snapshot.families.count
    }

    @Test func stateStopsGrowingUnderAStreamOfRefreshes() async throws {
        let authority = await authority()
        let signedIn = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        var refresh = try #require(signedIn.refreshToken)
        var sizes: [Int] = []
        // 30 s of the server clock, 400 refreshes a second, 12,000 in all.
        for _ in 0..<30 {
            for _ in 0..<400 {
                refresh = try #require(try await authority.refresh(refresh, clientID: "demo").get().refreshToken)
            }
            clock.advance(seconds: 1)
            sizes.append(try await records(authority))
        }
        // A window of about (retention + lifetime) seconds is kept, whatever the total.
        #expect(sizes[29] <= sizes[14] + 2100, "records over time: \(sizes)")
        #expect(sizes[29] < 12_000, "\(sizes)")
        let pruned = try await authority.prunedCounts()
        // Access tokens have no records of their own beyond a login's latest (AccessLedger).
        #expect(pruned.refresh > 5000, "\(pruned)")
        // Verified-signature cache and live state still work.
        #expect(try await authority.refresh(refresh, clientID: "demo").get().refreshToken != nil)
    }

    @Test func passesAreSpacedByTheServerClockNotOnlyByCount() async throws {
        // Retention 5 s: at most one pass per 1.25 s of server clock, however many tokens.
        let authority = await authority()
        let signedIn = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        var refresh = try #require(signedIn.refreshToken)
        for _ in 0..<(3 * TokenAuthority.pruneEvery) {
            refresh = try #require(try await authority.refresh(refresh, clientID: "demo").get().refreshToken)
        }
        #expect(try await authority.prunedCounts().passes == 1)
        clock.advance(seconds: 1.3)
        for _ in 0..<TokenAuthority.pruneEvery {
            refresh = try #require(try await authority.refresh(refresh, clientID: "demo").get().refreshToken)
        }
        #expect(try await authority.prunedCounts().passes == 2)
    }

    @Test func aPrunedTokenGetsTheAnswerItWouldHaveGot() async throws {
        var settings = TokenSettings(accessTTL: 1, refreshTTL: 20)
        settings.pruneAfterSeconds = 5
        let authority = try await TokenAuthority(settings: settings, signingKey: key, clock: clock)
        let quiet = try await authority.issue(subject: "bob", clientID: "demo", scope: "read")
        let busy = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        var current = try #require(busy.refreshToken)
        var spent = ""
        // Alice refreshes every second for 25 s; bob's login (20 s) ends and ages past the retention.
        for second in 1...25 {
            clock.advance(seconds: 1)
            if second == 10 { spent = current }
            current = try #require(try await authority.refresh(current, clientID: "demo").get().refreshToken)
        }
        let removed = try await authority.prune()
        #expect(removed.access > 0 && removed.refresh > 0 && removed.families == 1, "\(removed)")
        #expect(try await authority.snapshot().families.map(\.subject) == ["alice"])

        // An access token pruned long after its exp: still expired.
        guard case .invalid(.expired, _) = try await authority.verifyAccessToken(quiet.accessToken) else {
            Issue.record("a pruned access token must answer expired")
            return
        }
        // A login pruned after its refresh token expired: expired, as before.
        #expect(failure(try await authority.refresh(quiet.refreshToken!, clientID: "demo")) == .expired)
        // A rotated token whose record was pruned while its login lives: reuse, and the login is revoked.
        #expect(try await authority.inspectRefreshToken(spent) == nil, "its record is gone")
        #expect(failure(try await authority.refresh(spent, clientID: "demo")) == .reused)
        #expect(failure(try await authority.refresh(current, clientID: "demo")) == .revoked)
        // Not ours: unknown, tampered or not.
        #expect(failure(try await authority.refresh("garbage", clientID: "demo")) == .unknown)
        let tampered = String(spent.dropLast()) + (spent.last == "A" ? "B" : "A")
        #expect(failure(try await authority.refresh(tampered, clientID: "demo")) == .unknown)
    }

    /// Memory follows logins, not refreshes (issue 57): with pruning on, a
    /// login keeps its newest `rotatedKept` rotated refresh tokens as records
    /// however fast it refreshes and however long they live, and an older
    /// one gets the answer its record would have given: reuse (revoking the
    /// login) under `revoke_login`, a new token pair under `accept`. The
    /// database store drops the same records at its next pruning pass.
    @Test(arguments: ["memory", "sqlite"]) func aLoginKeepsOnlyItsNewestRotatedTokens(store kind: String) async throws {
        for policy in [RefreshReuse.revokeLogin, .accept] {
            var settings = TokenSettings(accessTTL: 3600, refreshTTL: 30 * 86_400)
            settings.refreshReuse = policy
            let (store, path) = try await throwawayStore(kind)
            defer { removeStore(path) }
            let authority = try await TokenAuthority(settings: settings, signingKey: key, clock: clock, store: store)
            let signedIn = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
            var chain = [try #require(signedIn.refreshToken)]
            // 300 refreshes within one second of the server clock: no pass is due by time.
            for _ in 0..<300 { chain.append(try #require(try await authority.refresh(chain.last!, clientID: "demo").get().refreshToken)) }
            if kind == "sqlite" { _ = try await authority.prune() }
            let kept = try await authority.snapshot().refresh
            #expect(kept.count == TokenRules.rotatedKept + 1, "\(policy): \(kept.count) refresh records for one login")
            #expect(Set(kept.map(\.id)).count == kept.count)
            switch policy {
            case .accept:
                // Rotated tokens stay valid: the oldest, its record gone, still exchanges.
                let again = try await authority.refresh(chain[0], clientID: "demo").get()
                #expect(again.familyID == signedIn.familyID && again.refreshToken != nil)
                #expect(try await authority.refresh(chain[0], clientID: "other") == .failure(.clientMismatch))
            default:
                #expect(try await authority.refresh(chain[0], clientID: "demo") == .failure(.reused))
                #expect(try await authority.refresh(chain.last!, clientID: "demo") == .failure(.revoked), "the reuse revoked the login")
            }
        }
    }

    @Test func zeroRetentionKeepsEverything() async throws {
        var settings = TokenSettings(accessTTL: 1, refreshTTL: 5)
        settings.pruneAfterSeconds = 0
        let authority = try await TokenAuthority(settings: settings, signingKey: key, clock: clock)
        var refresh = try #require(try await authority.issue(subject: "alice", clientID: "demo", scope: "read").refreshToken)
        for _ in 0..<1100 { refresh = try #require(try await authority.refresh(refresh, clientID: "demo").get().refreshToken) }
        clock.advance(seconds: 100)
        _ = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        #expect(try await authority.prunedCounts().passes == 0)
        let snapshot = try await authority.snapshot()
        #expect(snapshot.refresh.count == 1102)
        // The access tokens a login lists are its latest (AccessLedger); the others are judged from their claims.
        #expect(snapshot.access.count == AccessLedger.recentLimit + 1)
    }
}

func failure(_ result: Result<IssuedTokens, RefreshTokenFailure>) -> RefreshTokenFailure? {
    if case .failure(let failure) = result { return failure }
    return nil
}
