import AuthmockCore
import AuthmockStore
import Foundation
import JWTKit
import Testing

/// The token core against the virtual clock: no test here sleeps.
struct TokenAuthorityTests {
    let clock = VirtualClock()
    let key = try! SigningKey(secret: "test-secret-key-of-at-least-32-bytes")

    func authority(_ settings: TokenSettings = TokenSettings()) async -> TokenAuthority {
        try! await TokenAuthority(settings: settings, signingKey: key, clock: clock)
    }

    func isValid(_ result: AccessVerification) -> Bool {
        if case .valid = result { return true }
        return false
    }

    func expectInvalid(_ result: AccessVerification, _ failure: AccessTokenFailure, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .invalid(let got, _) = result else {
            Issue.record("expected \(failure), token was accepted", sourceLocation: sourceLocation)
            return
        }
        #expect(got == failure, sourceLocation: sourceLocation)
    }

    @Test func issuedAccessTokenIsAnRFC9068JWT() async throws {
        let authority = await authority()
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read write")
        let parts = issued.accessToken.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONSerialization.jsonObject(with: base64URLDecode(parts[0])) as! [String: Any]
        #expect(header["alg"] as? String == "HS256")
        #expect(header["typ"] as? String == "at+jwt")
        #expect(header["kid"] as? String == key.id)
        let claims = try JSONSerialization.jsonObject(with: base64URLDecode(parts[1])) as! [String: Any]
        for name in ["iss", "sub", "aud", "exp", "iat", "jti", "client_id", "scope"] {
            #expect(claims[name] != nil, "claim \(name) missing")
        }
        // iat rounds down and exp up, so exp - iat is the TTL or one second more.
        let lifetime = (claims["exp"] as! Int) - (claims["iat"] as! Int)
        #expect(lifetime == 300 || lifetime == 301)
        #expect(issued.expiresIn == 300)
        #expect(issued.refreshToken != nil)

        guard case .valid(let grant) = try await authority.verifyAccessToken(issued.accessToken) else {
            Issue.record("fresh token rejected")
            return
        }
        #expect(grant.subject == "alice")
        #expect(grant.scopes == ["read", "write"])
    }

    @Test func refreshTokensAreOpaqueAndHighEntropy() async throws {
        let authority = await authority()
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let refresh = try #require(issued.refreshToken)
        #expect(refresh.split(separator: ".").count == 1)
        #expect(try base64URLDecode(refresh).count >= 16)
        let other = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        #expect(other.refreshToken != refresh)
    }

    @Test func accessTokenExpiresOnTheVirtualClock() async throws {
        let authority = await authority(TokenSettings(accessTTL: 3600))
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        clock.advance(seconds: 3599)
        guard case .valid = try await authority.verifyAccessToken(issued.accessToken) else {
            Issue.record("token expired early")
            return
        }
        clock.advance(seconds: 1)
        expectInvalid(try await authority.verifyAccessToken(issued.accessToken), .expired)
    }

    @Test func tokenFromTheFutureIsNotYetValid() async throws {
        let authority = await authority()
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        clock.setOffset(seconds: -120)
        expectInvalid(try await authority.verifyAccessToken(issued.accessToken), .notYetValid)
    }

    @Test func missingAndGarbageTokens() async throws {
        let authority = await authority()
        expectInvalid(try await authority.verifyAccessToken(nil), .missing)
        expectInvalid(try await authority.verifyAccessToken(""), .missing)
        for garbage in ["abc", "a.b.c", "a.b", "....", "eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln", String(repeating: "x", count: 5000)] {
            expectInvalid(try await authority.verifyAccessToken(garbage), .malformed)
        }
    }

    @Test func algNoneIsRefusedByName() async throws {
        let authority = await authority()
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let payload = issued.accessToken.split(separator: ".")[1]
        let header = base64URLEncode(Data(#"{"alg":"none","typ":"at+jwt"}"#.utf8))
        expectInvalid(try await authority.verifyAccessToken("\(header).\(payload)."), .wrongAlgorithm)
        let headerNone = base64URLEncode(Data(#"{"alg":"None"}"#.utf8))
        expectInvalid(try await authority.verifyAccessToken("\(headerNone).\(payload).AAAA"), .wrongAlgorithm)
    }

    @Test func otherAlgorithmsAreRefused() async throws {
        let authority = await authority()
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        // Same secret, another HMAC: an algorithm-confusion attempt.
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: String(repeating: "k", count: 64)), digestAlgorithm: .sha512)
        let claims = try await keys.unverified(issued.accessToken, as: AccessTokenClaims.self)
        let hs512 = try await keys.sign(claims)
        expectInvalid(try await authority.verifyAccessToken(hs512), .wrongAlgorithm)
        let payload = issued.accessToken.split(separator: ".")[1]
        let rs256 = base64URLEncode(Data(#"{"alg":"RS256","typ":"at+jwt"}"#.utf8))
        expectInvalid(try await authority.verifyAccessToken("\(rs256).\(payload).c2lnbmF0dXJl"), .wrongAlgorithm)
    }

    @Test func wrongKeyAndTamperedPayloadFailTheSignature() async throws {
        let authority = await authority()
        let forger = try await TokenAuthority(
            settings: TokenSettings(), signingKey: try SigningKey(secret: "another-key-another-key-another-key"), clock: clock)
        let forged = try await forger.issue(subject: "alice", clientID: "demo", scope: "read")
        expectInvalid(try await authority.verifyAccessToken(forged.accessToken), .badSignature)

        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let parts = issued.accessToken.split(separator: ".").map(String.init)
        var claims = try JSONSerialization.jsonObject(with: base64URLDecode(parts[1])) as! [String: Any]
        claims["scope"] = "read write admin"
        let tampered = base64URLEncode(try JSONSerialization.data(withJSONObject: claims))
        expectInvalid(try await authority.verifyAccessToken("\(parts[0]).\(tampered).\(parts[2])"), .badSignature)
    }

    @Test func wrongAudienceIsRefused() async throws {
        let authority = await authority()
        let otherAPI = try await TokenAuthority(settings: TokenSettings(audience: "another-api"), signingKey: key, clock: clock)
        let issued = try await otherAPI.issue(subject: "alice", clientID: "demo", scope: "read")
        expectInvalid(try await authority.verifyAccessToken(issued.accessToken), .wrongAudience)
    }

    /// `claims` signed with the server's own key (so only the checks beyond
    /// the HMAC can refuse it), with `fields` added to the header.
    func signedWithServerKey(_ claims: AccessTokenClaims, kid: String?, fields: [String: JWTHeaderField] = [:]) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: "test-secret-key-of-at-least-32-bytes"), digestAlgorithm: .sha256)
        var header = JWTHeader(fields: fields)
        header.typ = "at+jwt"
        return try await keys.sign(claims, kid: kid.map { JWKIdentifier(string: $0) }, header: header)
    }

    @Test func onlyTheCanonicalSpellingOfATokenIsAccepted() async throws {
        let authority = await authority()
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        #expect(isValid(try await authority.verifyAccessToken(issued.accessToken)))
        // A padded signature decodes to the same bytes, but is another string.
        expectInvalid(try await authority.verifyAccessToken(issued.accessToken + "="), .malformed)
        // A 32-byte HMAC is 43 characters: the last one carries 2 unused bits.
        let parts = issued.accessToken.split(separator: ".").map(String.init)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = try #require(alphabet.firstIndex(of: parts[2].last!))
        let flipped = String(parts[2].dropLast()) + String(alphabet[last ^ 1])
        #expect(try base64URLDecode(flipped) == (try base64URLDecode(parts[2])), "same signature bytes")
        expectInvalid(try await authority.verifyAccessToken("\(parts[0]).\(parts[1]).\(flipped)"), .malformed)
    }

    @Test func headersAndIssuerBeyondTheSignatureAreChecked() async throws {
        let authority = await authority()
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let claims = try #require(await authority.signedClaims(issued.accessToken))
        // Re-signed with the right key and kid, it is the same token.
        #expect(isValid(try await authority.verifyAccessToken(try await signedWithServerKey(claims, kid: authority.keyID))))
        // RFC 7515 section 4.1.11: an extension this server does not implement.
        let critical = try await signedWithServerKey(claims, kid: authority.keyID, fields: ["crit": .array([.string("exp")])])
        expectInvalid(try await authority.verifyAccessToken(critical), .malformed)
        // A kid naming no key of this server, however long or odd.
        for kid in [String(repeating: "k", count: 4096), "../../etc/passwd", ""] {
            expectInvalid(try await authority.verifyAccessToken(try await signedWithServerKey(claims, kid: kid)), .badSignature)
        }
        expectInvalid(try await authority.verifyAccessToken(try await signedWithServerKey(claims, kid: nil)), .badSignature)
        // Another issuer with the same key (a copied key, another environment).
        let elsewhere = try await TokenAuthority(settings: TokenSettings(issuer: "https://elsewhere.test"), signingKey: key, clock: clock)
        let foreign = try await elsewhere.issue(subject: "alice", clientID: "demo", scope: "read")
        expectInvalid(try await authority.verifyAccessToken(foreign.accessToken), .wrongIssuer)
    }

    @Test func farFutureTimesAreRefusedNotTrapped() async throws {
        let authority = await authority()
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        var claims = try #require(await authority.signedClaims(issued.accessToken))
        claims.exp = ExpirationClaim(value: Date(timeIntervalSince1970: 1e300))
        expectInvalid(try await authority.verifyAccessToken(try await signedWithServerKey(claims, kid: authority.keyID)), .malformed)
        #expect(await authority.signedClaims(try await signedWithServerKey(claims, kid: authority.keyID)) == nil)
    }

    @Test func rotationRetiresThePresentedRefreshToken() async throws {
        let authority = await authority()
        let first = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let second = try await authority.refresh(first.refreshToken!, clientID: "demo").get()
        #expect(second.refreshToken != nil)
        #expect(second.refreshToken != first.refreshToken)
        #expect(second.familyID == first.familyID)
        let third = try await authority.refresh(second.refreshToken!, clientID: "demo").get()
        #expect(third.familyID == first.familyID)
    }

    @Test func reuseOfARotatedTokenRevokesTheWholeFamily() async throws {
        let authority = await authority()
        let first = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let second = try await authority.refresh(first.refreshToken!, clientID: "demo").get()
        let unrelated = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")

        #expect(try await authority.refresh(first.refreshToken!, clientID: "demo") == .failure(.reused))
        // The family is dead: its newest refresh token and its live access tokens too.
        #expect(try await authority.refresh(second.refreshToken!, clientID: "demo") == .failure(.revoked))
        expectInvalid(try await authority.verifyAccessToken(second.accessToken), .revoked)
        expectInvalid(try await authority.verifyAccessToken(first.accessToken), .revoked)
        // Another login is untouched.
        guard case .valid = try await authority.verifyAccessToken(unrelated.accessToken) else {
            Issue.record("an unrelated family was revoked")
            return
        }
        #expect(try await authority.refresh(unrelated.refreshToken!, clientID: "demo").get().familyID == unrelated.familyID)
    }

    @Test func graceWindowLetsAJustRotatedTokenWorkBriefly() async throws {
        let authority = await authority(TokenSettings(reuseGraceSeconds: 10))
        let first = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        _ = try await authority.refresh(first.refreshToken!, clientID: "demo").get()
        clock.advance(seconds: 9)
        let retry = try await authority.refresh(first.refreshToken!, clientID: "demo")
        #expect((try? retry.get()) != nil, "reuse inside the grace window must succeed")
        clock.advance(seconds: 1.5)
        #expect(try await authority.refresh(first.refreshToken!, clientID: "demo") == .failure(.reused))
    }

    /// `refresh_reuse: reject`: a reuse is refused, and the login and its newer tokens live on.
    @Test func rejectingAReuseLeavesTheLogin() async throws {
        var settings = TokenSettings()
        settings.refreshReuse = .reject
        let authority = await authority(settings)
        let first = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let second = try await authority.refresh(first.refreshToken!, clientID: "demo").get()
        #expect(try await authority.refresh(first.refreshToken!, clientID: "demo") == .failure(.reused))
        guard case .valid = try await authority.verifyAccessToken(second.accessToken) else {
            Issue.record("a rejected reuse revoked the login")
            return
        }
        #expect(try await authority.refresh(second.refreshToken!, clientID: "demo").get().familyID == first.familyID)
    }

    /// `refresh_reuse: accept`: a rotated token stays valid until it expires, however late it comes.
    @Test func acceptingAReuseKeepsRotatedTokensValid() async throws {
        var settings = TokenSettings(refreshTTL: 1000)
        settings.refreshReuse = .accept
        let authority = await authority(settings)
        let first = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let second = try await authority.refresh(first.refreshToken!, clientID: "demo").get()
        clock.advance(seconds: 500)
        let again = try await authority.refresh(first.refreshToken!, clientID: "demo").get()
        #expect(again.familyID == first.familyID && again.refreshToken != second.refreshToken)
        #expect((try? await authority.refresh(second.refreshToken!, clientID: "demo").get()) != nil)
        clock.advance(seconds: 501)
        #expect(try await authority.refresh(first.refreshToken!, clientID: "demo") == .failure(.expired))
    }

    /// `reused_parent: current_child` (Supabase): a client that lost its
    /// refresh answer and presents the old token again gets the token that
    /// replaced it, at any age, in both kinds of store; once that successor
    /// is rotated in turn, the old token is an ordinary reuse.
    @Test(arguments: ["memory", "sqlite"]) func aReusedParentGetsItsCurrentChild(store kind: String) async throws {
        var settings = TokenSettings(refreshTTL: 1000)
        settings.reusedParent = .currentChild
        let (store, path) = try await throwawayStore(kind)
        defer { removeStore(path) }
        let authority = try await TokenAuthority(settings: settings, signingKey: key, clock: clock, store: store)
        let first = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let second = try await authority.refresh(first.refreshToken!, clientID: "demo").get()
        clock.advance(seconds: 300)
        let again = try await authority.refresh(first.refreshToken!, clientID: "demo").get()
        #expect(again.refreshToken == second.refreshToken, "the parent gets its live child back, not a new one")
        #expect(again.accessToken != second.accessToken && again.familyID == first.familyID)
        #expect(isValid(try await authority.verifyAccessToken(again.accessToken)))
        let third = try await authority.refresh(second.refreshToken!, clientID: "demo").get()
        #expect(try await authority.refresh(first.refreshToken!, clientID: "demo") == .failure(.reused))
        #expect(try await authority.refresh(third.refreshToken!, clientID: "demo") == .failure(.revoked), "the reuse revoked the login")
    }

    /// `concurrent_refresh`: a refresh that arrived before another refresh of
    /// its token was decided (two at once) gets a new pair of its own under
    /// `both_succeed` (SimpleJWT, league/Passport: no lock between check and
    /// write), in both kinds of store; under `serialized` the reuse rules
    /// answer it; one that arrived after the rotation is a reuse either way.
    @Test(arguments: ["memory", "sqlite"]) func twoRefreshesAtOnceBothSucceedWhereTheBackendHasNoLock(store kind: String) async throws {
        for policy in ConcurrentRefresh.allCases {
            var settings = TokenSettings(refreshTTL: 1000)
            settings.refreshReuse = .reject
            settings.concurrentRefresh = policy
            let (store, path) = try await throwawayStore(kind)
            defer { removeStore(path) }
            let authority = try await TokenAuthority(settings: settings, signingKey: key, clock: clock, store: store)
            let signedIn = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
            let token = try #require(signedIn.refreshToken)
            let bothArrived = clock.now()
            clock.advance(seconds: 0.01)
            let first = try await authority.refresh(token, clientID: "demo", arrivedAt: bothArrived).get()
            clock.advance(seconds: 0.01)
            let second = try await authority.refresh(token, clientID: "demo", arrivedAt: bothArrived)
            switch policy {
            case .bothSucceed:
                let pair = try second.get()
                #expect(pair.refreshToken != first.refreshToken && pair.familyID == first.familyID)
                #expect(try await authority.refresh(pair.refreshToken!, clientID: "demo").get().refreshToken != nil)
                #expect(try await authority.refresh(token, clientID: "other", arrivedAt: bothArrived) == .failure(.clientMismatch))
            case .serialized:
                #expect(second == .failure(.reused))
            }
            // Arrived after the rotation was decided: the reuse rules, whatever the setting.
            #expect(try await authority.refresh(token, clientID: "demo", arrivedAt: clock.now()) == .failure(.reused), "\(policy)")
            #expect(try await authority.refresh(first.refreshToken!, clientID: "demo").get().familyID == signedIn.familyID)
        }
    }

    /// `exp - iat` is the lifetime `expires_in` says, as at the vendors (it was
    /// one second more: `iat` rounded down, `exp` up), for the access and the
    /// id token; the server takes the token until its exact issue time plus
    /// the lifetime, so a client counting `expires_in` meets no early refusal.
    @Test func expMinusIatIsTheLifetime() async throws {
        let authority = try await TokenAuthority(settings: TokenSettings(accessTTL: 300), signingKey: key, clock: clock)
        clock.advance(seconds: 0.7 - clock.now().timeIntervalSince1970.truncatingRemainder(dividingBy: 1) + 1)
        let issuedAt = clock.now()
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "openid read")
        let claims = try #require(await authority.signedClaims(issued.accessToken))
        #expect(claims.exp.value.timeIntervalSince(claims.iat.value) == 300)
        let idPayload = try #require(issued.idToken?.split(separator: ".").dropFirst().first.map(String.init))
        let idData = try #require(Data(base64URLEncoded: idPayload))
        let idClaims = try #require(try JSONSerialization.jsonObject(with: idData) as? [String: Any])
        #expect((idClaims["exp"] as? Int ?? 0) - (idClaims["iat"] as? Int ?? 0) == 300)
        clock.advance(seconds: issuedAt.addingTimeInterval(299.9).timeIntervalSince(clock.now()))
        #expect(isValid(try await authority.verifyAccessToken(issued.accessToken)), "past exp, before its issue time plus the lifetime")
        clock.advance(seconds: 0.2)
        expectInvalid(try await authority.verifyAccessToken(issued.accessToken), .expired)
    }

    /// `jwt.refresh_claims` (Keycloak): refresh tokens are JWTs a client can
    /// decode (`typ: Refresh`, `exp - iat` the lifetime), signed HS512 with a
    /// key of the server's own; they work as opaque ones do, their seal (the
    /// `jti`) still tells an unrecorded one, and a changed claim or signature
    /// makes the token unknown.
    @Test(arguments: ["memory", "sqlite"]) func refreshTokensAreJWTsWhereTheDialectSaysSo(store kind: String) async throws {
        var settings = TokenSettings(refreshTTL: 1800)
        settings.jwtShape.refreshClaims = ["typ": "Refresh", "azp": "{client_id}-app"]
        settings.jwtShape.issuerPath = "/realms/authmock"
        let (store, path) = try await throwawayStore(kind)
        defer { removeStore(path) }
        let authority = try await TokenAuthority(settings: settings, signingKey: key, clock: clock, store: store)
        clock.advance(seconds: 0.6)
        let signedIn = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let token = try #require(signedIn.refreshToken)
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let headerData = try #require(Data(base64URLEncoded: parts[0]))
        let claimsData = try #require(Data(base64URLEncoded: parts[1]))
        let header = try #require(try JSONSerialization.jsonObject(with: headerData) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: claimsData) as? [String: Any])
        #expect(header["alg"] as? String == "HS512")
        #expect(claims["typ"] as? String == "Refresh" && claims["azp"] as? String == "demo" && claims["sub"] as? String == "alice")
        #expect((claims["exp"] as? Int ?? 0) - (claims["iat"] as? Int ?? 0) == 1800)
        #expect((claims["iss"] as? String)?.hasSuffix("/realms/authmock") == true && claims["sid"] as? String == signedIn.familyID)
        #expect(await authority.signedClaims(token) == nil, "no access token verifies as a refresh token's signature")

        let next = try await authority.refresh(token, clientID: "demo").get()
        #expect(next.refreshToken?.split(separator: ".").count == 3 && next.refreshToken != token)
        #expect(try await authority.refresh(token, clientID: "demo") == .failure(.reused))
        var forged = claims
        forged["sub"] = "mallory"
        let forgedPayload = try JSONSerialization.data(withJSONObject: forged).base64URLEncodedString()
        #expect(try await authority.refresh([parts[0], forgedPayload, parts[2]].joined(separator: "."), clientID: "demo") == .failure(.unknown))
        #expect(try await authority.refresh(parts[0] + "." + parts[1] + ".AAAA", clientID: "demo") == .failure(.unknown))
    }

    /// `refresh_revokes_access` (Laravel Passport): each refresh revokes the
    /// access tokens its login held before it, older than the ledger's
    /// recent records too, and no other login's; tokens issued after the one
    /// a refresh kept are not reached (two refreshes racing keep the newer).
    @Test(arguments: ["memory", "sqlite"]) func aRefreshRevokesTheAccessTokensItReplaces(store kind: String) async throws {
        var settings = TokenSettings(rotateRefreshTokens: false)
        settings.refreshRevokesAccess = true
        let (store, path) = try await throwawayStore(kind)
        defer { removeStore(path) }
        let authority = try await TokenAuthority(settings: settings, signingKey: key, clock: clock, store: store)
        let first = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let other = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        var earlier = [first.accessToken]
        var latest = first
        for _ in 0..<40 {
            clock.advance(seconds: 1)
            latest = try await authority.refresh(first.refreshToken!, clientID: "demo").get()
            earlier.append(latest.accessToken)
        }
        earlier.removeLast()
        for token in earlier { expectInvalid(try await authority.verifyAccessToken(token), .revoked) }
        #expect(isValid(try await authority.verifyAccessToken(latest.accessToken)))
        #expect(isValid(try await authority.verifyAccessToken(other.accessToken)), "another login of the same user is not reached")
        // Without the setting, a late revocation keeping an older token leaves the newer one.
        let plain = try await TokenAuthority(settings: TokenSettings(rotateRefreshTokens: false), signingKey: key, clock: clock, store: store)
        let kept = try await plain.refresh(other.refreshToken!, clientID: "demo").get()
        let newer = try await plain.refresh(other.refreshToken!, clientID: "demo").get()
        try await store.revokeEarlierAccess(family: other.familyID!, keep: kept.accessKey, now: clock.now())
        expectInvalid(try await plain.verifyAccessToken(other.accessToken), .revoked)
        #expect(isValid(try await plain.verifyAccessToken(kept.accessToken)))
        #expect(isValid(try await plain.verifyAccessToken(newer.accessToken)))
    }

    @Test func withoutRotationTheSameRefreshTokenKeepsWorking() async throws {
        let authority = await authority(TokenSettings(rotateRefreshTokens: false))
        let first = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        let second = try await authority.refresh(first.refreshToken!, clientID: "demo").get()
        #expect(second.refreshToken == nil)
        _ = try await authority.refresh(first.refreshToken!, clientID: "demo").get()
    }

    @Test func refreshTokenExpiresAndBelongsToItsClient() async throws {
        let authority = await authority(TokenSettings(refreshTTL: 60))
        let first = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        #expect(try await authority.refresh(first.refreshToken!, clientID: "other") == .failure(.clientMismatch))
        #expect(try await authority.refresh("not-a-token", clientID: "demo") == .failure(.unknown))
        clock.advance(seconds: 60)
        #expect(try await authority.refresh(first.refreshToken!, clientID: "demo") == .failure(.expired))
    }

    @Test func revokingARefreshTokenRevokesItsFamily() async throws {
        let authority = await authority()
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        try await authority.revoke(token: issued.refreshToken!)
        expectInvalid(try await authority.verifyAccessToken(issued.accessToken), .revoked)
        #expect(try await authority.introspect(token: issued.refreshToken!) == .inactive)
        #expect(try await authority.refresh(issued.refreshToken!, clientID: "demo") == .failure(.revoked))
    }

    @Test func revokingAnAccessTokenLeavesTheFamily() async throws {
        let authority = await authority()
        let issued = try await authority.issue(subject: "alice", clientID: "demo", scope: "read")
        try await authority.revoke(token: issued.accessToken)
        expectInvalid(try await authority.verifyAccessToken(issued.accessToken), .revoked)
        _ = try await authority.refresh(issued.refreshToken!, clientID: "demo").get()
    }

    @Test func authorizationCodeWithPKCE() async throws {
        let authority = await authority()
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  // RFC 7636 appendix B
        let code = try await authority.createAuthorizationCode(
            clientID: "demo", subject: "alice", scope: "read", redirectURI: "app://cb",
            codeChallenge: challenge, codeChallengeMethod: "S256")
        #expect(
            try await authority.redeemAuthorizationCode(code, clientID: "demo", redirectURI: "app://cb", codeVerifier: "wrong")
                == .failure(.pkceMismatch))
        #expect(
            try await authority.redeemAuthorizationCode(code, clientID: "demo", redirectURI: "app://other", codeVerifier: verifier)
                == .failure(.redirectMismatch))
        #expect(
            try await authority.redeemAuthorizationCode(code, clientID: "demo", redirectURI: "app://cb", codeVerifier: nil) == .failure(.pkceMissing))
        let issued = try await authority.redeemAuthorizationCode(code, clientID: "demo", redirectURI: "app://cb", codeVerifier: verifier).get()
        // A second redemption fails and revokes what the first one issued.
        #expect(
            try await authority.redeemAuthorizationCode(code, clientID: "demo", redirectURI: "app://cb", codeVerifier: verifier) == .failure(.used))
        expectInvalid(try await authority.verifyAccessToken(issued.accessToken), .revoked)
    }

    @Test func authorizationCodeExpires() async throws {
        let authority = await authority()
        let code = try await authority.createAuthorizationCode(
            clientID: "demo", subject: "alice", scope: "read", redirectURI: nil, codeChallenge: nil, codeChallengeMethod: nil)
        clock.advance(seconds: 61)
        #expect(try await authority.redeemAuthorizationCode(code, clientID: "demo", redirectURI: nil, codeVerifier: nil) == .failure(.expired))
    }

    @Test func shortSigningKeysAreRefused() {
        #expect(throws: SettingsError.self) { try SigningKey(secret: "short") }
    }

    @Test func settingsAreValidated() {
        #expect(throws: SettingsError.self) { try TokenSettings(accessTTL: 0).validate() }
        #expect(throws: SettingsError.self) { try TokenSettings(reuseGraceSeconds: -1).validate() }
        #expect(throws: Never.self) { try TokenSettings(accessTTL: 1).validate() }
    }
}

func base64URLDecode(_ text: String) throws -> Data {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    return try #require(Data(base64Encoded: base64))
}

func base64URLEncode(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// A token store of `kind` for a test run against both: in memory, or SQLite
/// in a throwaway file (its path, for `removeStore`; nil in memory).
func throwawayStore(_ kind: String) async throws -> (any TokenStore, String?) {
    guard kind == "sqlite" else { return (MemoryTokenStore(), nil) }
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-store-\(UUID()).db").path
    return (try await SQLTokenStore(try SQLiteDatabase(path: path)), path)
}

/// Removes a throwaway SQLite store's files.
func removeStore(_ path: String?) {
    guard let path else { return }
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}
