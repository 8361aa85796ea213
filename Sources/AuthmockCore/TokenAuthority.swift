public import DriverProtocol
public import Foundation
import JWTKit
import Logging
import Synchronization

/// The token core: issues, verifies, rotates and revokes tokens against the
/// virtual clock. Token state lives in a `TokenStore` (memory by default);
/// signing and signature checks run outside it.
public final class TokenAuthority: Sendable {
    public let clock: VirtualClock
    public let settings: TokenSettings
    /// The keys tokens are signed with (`--signing-alg`), rotated by the control API.
    public let keyRing: KeyRing
    /// The `kid` new tokens carry.
    public var keyID: String { keyRing.currentKeyID }
    public let store: any TokenStore
    /// `store` when it is the in-process one: verification, asked on every
    /// request, reads it without an async call.
    let memoryStore: MemoryTokenStore?
    let mint: TokenMint
    /// Token-issuing operations since the last pruning pass, and the
    /// server-clock time of that pass (per process: pruning is idempotent).
    private let pruneSchedule = Mutex((issued: 0, last: Date?.none))
    /// Verified token strings are immutable, so their signature is checked
    /// once; later uses pay only for the expiry and revocation checks.
    /// Tokens whose signature checked out, with their `jti` read.
    private let verifiedTokens = Mutex([TokenText: (claims: AccessTokenClaims, key: TokenID)]())
    private static let verifiedTokensLimit = 100_000
    private let issuerName: IssuerName
    private let logger = Logger(label: "authmock.tokens")
    let seal: RefreshTokenSeal
    /// A pruning pass runs after this many token-issuing operations, and
    /// once a quarter of the retention (at least a second) of the server
    /// clock has passed since the last one: a pass visits every record, so
    /// at full rate it must not run many times a second. It depends on no
    /// timer (tests are repeatable: they move the clock).
    static let pruneEvery = 1024

    /// `signingKey` is used as given: ask the store first (`adoptSigningKey`)
    /// when tokens of an earlier run must stay valid.
    public init(settings: TokenSettings, signingKey: SigningKey, clock: VirtualClock, store: any TokenStore = MemoryTokenStore()) async throws {
        self.settings = settings
        self.clock = clock
        self.store = store
        self.memoryStore = store as? MemoryTokenStore
        self.issuerName = IssuerName(settings.issuer + settings.jwtShape.issuerPath)
        self.seal = RefreshTokenSeal(signingKey: signingKey, jwtClaims: settings.jwtShape.refreshClaims, issuer: issuerName)
        self.mint = TokenMint(settings: settings, seal: seal)
        if settings.signingAlgorithm.isAsymmetric {
            // Key pairs kept by the store (an earlier run's, or another
            // replica's) keep its tokens valid; new ones are made only when none are.
            var kept = try await store.keptKeys()
            if kept?.algorithm != settings.signingAlgorithm { kept = try await store.adoptKeys(try KeyRing.newKeys(settings.signingAlgorithm)) }
            do {
                self.keyRing = try await KeyRing(kept: kept!)
            } catch {
                // Said as a store problem: the caller names the store (`--state ...`).
                throw TokenStoreError("the kept signing keys cannot be used (authmock_meta, key keys): \(error)")
            }
        } else {
            self.keyRing = await KeyRing(hmac: signingKey)
        }
    }

    /// `iss` of tokens issued from now on; starts as `settings.issuer` and is
    /// fixed once the server knows its real address (port 0). A dialect's
    /// `jwt.issuer_path` follows the address (a user pool's URL).
    public var issuer: String { issuerName.text }

    /// `base`: the server's URL; the dialect's issuer path is added to it.
    public func setIssuer(_ base: String) {
        issuerName.text = base + settings.jwtShape.issuerPath
    }

    /// The server's time for a decision. A shared store keeps the clock
    /// offset (a test moves it through any replica), so it is read first.
    @inline(__always)
    public func now() async throws -> Date {
        if store.isShared {
            // One read tells both: where a test moved the clock, and whether keys rotated elsewhere.
            let shared = try await store.sharedSettings()
            if let offset = shared.clockOffset { clock.setOffset(seconds: offset) }
            if let version = shared.keysVersion, version > keyRing.version { try await reloadKeys() }
        }
        return clock.now()
    }

    /// Installs the store's key pairs when another replica rotated them.
    private func reloadKeys() async throws {
        guard keyRing.algorithm.isAsymmetric, let kept = try await store.keptKeys() else { return }
        do {
            try await keyRing.install(kept)
        } catch {
            throw TokenStoreError("the kept signing keys cannot be used: \(error)")
        }
    }

    /// A new current key pair; the current one verifies, and stays in the
    /// JWKS, for `grace` seconds of the server clock. Nil for HS256 (its
    /// secret is shared, not published: no verifier could learn a new one).
    public func rotateKeys(grace: Double) async throws -> (new: String, retired: String)? {
        guard let mine = keyRing.kept else { return nil }
        let fresh = try KeyRing.newKey(keyRing.algorithm)
        let now = try await now()
        // Through the store, atomically: a rotation via any replica is the one every replica installs.
        let next = try await store.updateKeys(from: mine) { $0.rotated(to: fresh, at: now, grace: grace) }
        try await keyRing.install(next)
        // The key current before is the one after the new key.
        return (fresh.kid, next.keys.dropFirst().first?.kid ?? "")
    }

    /// Keeps the clock's offset in the store (after the control API moved it).
    public func clockMoved() async throws {
        try await store.setClockOffset(clock.offsetSeconds)
    }

    // MARK: Issuing

    /// Signs in `user` through `client`: a new family with a refresh token and an access token.
    public func issue(subject: String, clientID: String, scope: String, nonce: String? = nil) async throws -> IssuedTokens {
        var login = mint.login(subject: subject, clientID: clientID, scope: scope, at: try await now())
        let access = try await SignedAccess.make(login.access, signer)
        login.access = access.record
        try await store.createLogin(login)
        return try await tokens(
            access: access, refresh: login.refresh, familyID: login.family.id,
            identity: IdentityClaims(signedInAt: login.family.createdAt, nonce: nonce))
    }

    /// `client_credentials`: an access token with no refresh token and no family.
    public func issueWithoutRefresh(subject: String, clientID: String, scope: String) async throws -> IssuedTokens {
        let record = mint.access(owner: TokenOwner(familyID: nil, subject: subject, clientID: clientID, scope: scope), at: try await now())
        let access = try await SignedAccess.make(record, signer)
        try await store.createAccess(access.record)
        return try await tokens(access: access, refresh: nil, familyID: nil)
    }

    /// Exchanges a refresh token. `clientID` nil skips the client check (for
    /// dialects without client authentication). On reuse of a rotated token
    /// past the grace window the whole family is revoked.
    /// `rotate` overrides the server setting (header rotation keeps its refresh token).
    /// `arrivedAt`: when the request arrived (server clock), for `concurrent_refresh`.
    public func refresh(
        _ token: String, clientID: String?, rotate: Bool? = nil, arrivedAt: Date? = nil
    ) async throws -> Result<IssuedTokens, RefreshTokenFailure> {
        let exchange = RefreshExchange(
            value: token, clientID: clientID, rotate: rotate ?? settings.rotateRefreshTokens, now: try await now(), arrivedAt: arrivedAt)
        let outcome = try await store.exchange(exchange, mint: mint, sign: signer)
        switch outcome {
        case .failed(let failure): return .failure(failure)
        case .issued(let access, let next, let family):
            // OIDC Core 12.2: a refreshed id token keeps the sign-in time and carries no nonce.
            let identity = settings.idTokenOnRefresh ? IdentityClaims(signedInAt: family.createdAt, nonce: nil) : nil
            var issued = try await tokens(access: access, refresh: next, familyID: family.id, identity: identity)
            if next == nil { issued.refreshToken = nil }
            // Before the answer leaves: a client never holds the new token while the old one still works.
            if settings.refreshRevokesAccess { try await store.revokeEarlierAccess(family: family.id, keep: issued.accessKey, now: exchange.now) }
            return .success(issued)
        }
    }

    /// A new access token in an existing family, for dialects that rotate the
    /// access token through a response header.
    public func rotateAccessToken(familyID: String) async throws -> IssuedTokens? {
        guard let access = try await store.rotateAccess(familyID: familyID, now: try await now(), mint: mint, sign: signer) else { return nil }
        return try await tokens(access: access, refresh: nil, familyID: familyID)
    }

    /// Counts a token-issuing operation and prunes every `pruneEvery` of them.
    func notePruning(at now: Date) async throws {
        guard settings.pruneAfterSeconds > 0 else { return }
        let gap = max(1, Double(settings.pruneAfterSeconds) / 4)
        let due = pruneSchedule.withLock { schedule in
            schedule.issued += 1
            return schedule.issued >= Self.pruneEvery && schedule.last.map { now.timeIntervalSince($0) >= gap } ?? true
        }
        if due { try await prune(at: now) }
    }

    /// One pruning pass now (the control API's `tokens/prune`, and every
    /// `pruneEvery` issuing operations); returns what it removed.
    @discardableResult
    public func prune(at time: Date? = nil) async throws -> PrunedCounts {
        var now = time ?? Date()
        if time == nil { now = try await self.now() }
        let retention = Double(settings.pruneAfterSeconds)
        pruneSchedule.withLock { $0 = (0, now) }
        let removed = try await store.prune(now: now, retention: retention, grace: Double(settings.reuseGrace))
        let horizon = now.addingTimeInterval(-retention)
        _ = verifiedTokens.withLock { $0.removeEntries { $0.value.claims.exp.value <= horizon } }
        return removed
    }

    /// Records pruned so far.
    public func prunedCounts() async throws -> PrunedCounts { try await store.prunedCounts() }

    func forgetVerifiedTokens() {
        verifiedTokens.withLock { $0.removeAll() }
    }

    /// What an id token says beyond the access token: when the user signed
    /// in and the authorization request's `nonce`.
    struct IdentityClaims {
        var signedInAt: Date
        var nonce: String?
    }

    /// Claims from the config file per user (`users[].claims`), for id tokens and userinfo.
    private let configuredClaims = Mutex([String: [String: ClaimValue]]())

    public func setUserClaims(_ claims: [String: [String: ClaimValue]]) {
        configuredClaims.withLock { $0 = claims }
    }

    public func userClaims(of subject: String) -> [String: ClaimValue] { configuredClaims.withLock { $0[subject] ?? [:] } }

    /// Signs access records for the store, inside the step that records them.
    private var signer: AccessSigner {
        { [self] access in
            let shape = settings.jwtShape
            let claims = AccessTokenClaims(
                iss: .init(value: issuer), sub: .init(value: access.subject),
                aud: shape.accessAudience ? .init(value: settings.audience) : nil, exp: .init(value: access.expClaim),
                iat: .init(value: access.issuedAt.wholeSeconds(.down)),
                nbf: shape.accessNotBefore ? .init(value: access.issuedAt.wholeSeconds(.down)) : nil,
                jti: .init(value: access.jti), clientID: access.clientID, scope: access.scope,
                sid: access.familyID ?? "",
                extra: shape.accessClaims.mapValues { .string(TokenShape.filled($0, user: access.subject, clientID: access.clientID)) }
            )
            var header = JWTHeader()
            header.typ = "at+jwt"
            return try await keyRing.sign(claims, header: header)
        }
    }

    /// What a client receives for `signed` (recorded already): the tokens, and an id token when asked for.
    private func tokens(
        access signed: SignedAccess, refresh: RefreshRecord?, familyID: String?, identity: IdentityClaims? = nil
    ) async throws -> IssuedTokens {
        let (access, jwt) = (signed.record, signed.jwt)
        // The tokens are recorded: pruning is housekeeping, and its failure must not turn them into a 503.
        do {
            try await notePruning(at: access.issuedAt)
        } catch {
            logger.warning("pruning of expired token records failed (it runs again later): \(error)")
        }
        var issued = IssuedTokens(
            accessToken: jwt, accessKey: access.key, expiresIn: Int(access.lifetime),
            refreshToken: refresh?.value, refreshKey: refresh?.key, scope: access.scope, familyID: familyID)
        // OpenID Connect asks for one; a dialect whose backend always issues one says so in `jwt.id_token_claims`.
        let dialectClaims = settings.jwtShape.idTokenClaims
        if let identity, dialectClaims != nil || access.scope.split(separator: " ").contains("openid") {
            var extra = userClaims(of: access.subject)
            if settings.resourceToken == .id {
                // The id token stands for its access token at the resources: that token's record is its.
                extra["jti"] = .string(access.jti)
            } else if dialectClaims != nil {
                // Such a backend's id tokens have an id of their own, as its access tokens do.
                extra["jti"] = .string(UUID().uuidString.lowercased())
            }
            if let dialectClaims {
                for (name, value) in dialectClaims {
                    extra[name] = .string(TokenShape.filled(value, user: access.subject, clientID: access.clientID))
                }
            }
            let idClaims = IDTokenClaims(
                iss: issuer, sub: access.subject, aud: access.clientID, exp: access.expClaim,
                iat: access.issuedAt.wholeSeconds(.down), authTime: identity.signedInAt.wholeSeconds(.down), nonce: identity.nonce,
                // A dialect's id token is its backend's: one issued beside every sign-in carries no at_hash.
                atHash: dialectClaims == nil ? IDTokenClaims.accessTokenHash(jwt) : nil, sid: familyID, extra: extra)
            var idHeader = JWTHeader()
            idHeader.typ = "JWT"
            issued.idToken = try await keyRing.sign(idClaims, header: idHeader)
        }
        return issued
    }

    // MARK: Verifying

    /// Judges a presented access token. Every way a token can be bad is an
    /// `AccessTokenFailure`; it throws only when the token store fails.
    public func verifyAccessToken(_ token: String?) async throws -> AccessVerification {
        guard let token, !token.isEmpty else { return .invalid(.missing, tokenID: nil) }
        await dropEndedKeys()
        let (claims, key): (AccessTokenClaims, TokenID)
        if let known = verifiedTokens.withLock({ $0[TokenText(token)] }) {
            (claims, key) = known
        } else {
            switch await checkSignature(token) {
            case .failure(let rejected): return .invalid(rejected.failure, tokenID: rejected.tokenID)
            case .success(let verified):
                (claims, key) = (verified, TokenID(verified.jti.value))
                verifiedTokens.withLock { cache in
                    if cache.count >= Self.verifiedTokensLimit { cache.removeAll(keepingCapacity: true) }
                    cache[TokenText(token)] = (claims, key)
                }
            }
        }
        guard !settings.jwtShape.accessAudience || claims.aud?.value.contains(settings.audience) == true else {
            return .invalid(.wrongAudience, tokenID: claims.jti.value)
        }
        return try await judge(claims, key: key)
    }

    /// Judges a token presented to a resource: the access token, or under
    /// `api_token: id` the id token issued beside it, which stands for that
    /// access token (its `jti`): it expires, is revoked and grants scopes
    /// with it. There an access token is refused as one for another audience.
    public func verifyResourceToken(_ token: String?) async throws -> AccessVerification {
        guard settings.resourceToken == .id else { return try await verifyAccessToken(token) }
        guard let token, !token.isEmpty else { return .invalid(.missing, tokenID: nil) }
        await dropEndedKeys()
        switch await checkSignature(token, as: IDTokenClaims.self) {
        case .success(let id):
            guard case .string(let jti)? = id.extra["jti"] else { return .invalid(.malformed, tokenID: nil) }
            let claims = AccessTokenClaims(
                iss: id.iss, sub: id.sub, aud: id.aud, exp: id.exp, iat: id.iat, nbf: nil, jti: .init(value: jti), clientID: id.azp, scope: "",
                sid: id.sid ?? "")
            return try await judge(claims, key: TokenID(jti))
        case .failure(let rejected):
            // One of this server's access tokens, where the id token goes.
            if rejected.failure == .malformed, case .success(let access) = await checkSignature(token, as: AccessTokenClaims.self) {
                return .invalid(.wrongAudience, tokenID: access.jti.value)
            }
            return .invalid(rejected.failure, tokenID: rejected.tokenID)
        }
    }

    /// A key whose rotation grace ended no longer vouches for its tokens, cached or not.
    private func dropEndedKeys() async {
        let checked = clock.now()
        if keyRing.hasExpired(at: checked), await keyRing.dropExpired(at: checked) { forgetVerifiedTokens() }
    }

    /// An access token's standing on the server clock, its signature checked:
    /// its record's expiry and revocation, and its login's.
    private func judge(_ claims: AccessTokenClaims, key: TokenID) async throws -> AccessVerification {
        let jti = claims.jti.value
        let now = try await now()
        let (record, familyRevoked) =
            if let memoryStore { memoryStore.accessState(key: key, claims: claims) } else { try await store.accessState(jti: jti, sid: claims.sid) }
        let failure: AccessTokenFailure? = {
            guard let record else {
                // Pruned (its exp passed long ago) or unknown to this server's store.
                if familyRevoked { return .revoked }
                return claims.exp.value <= now ? .expired : .revoked
            }
            if record.revokedAt != nil || familyRevoked { return .revoked }
            if (claims.nbf?.value ?? claims.iat.value) > now || claims.iat.value > now { return .notYetValid }
            // The record's end, not `exp`: a whole second from `iat`, it may come up to a second sooner, and a
            // client that counts `expires_in` from the answer must never meet a refusal it could not predict.
            if record.expiresAt <= now { return .expired }
            return nil
        }()
        if let failure { return .invalid(failure, tokenID: jti) }
        var granted = claims
        // An id token carries no scope: its access token's record has it.
        if let record, granted.scope.isEmpty { granted.scope = record.scope }
        return .valid(AccessGrant(claims: granted, key: key))
    }

    private func checkSignature(_ token: String) async -> Result<AccessTokenClaims, RejectedSignature> {
        await checkSignature(token, as: AccessTokenClaims.self)
    }

    private func checkSignature<Claims: SignedClaims>(_ token: String, as: Claims.Type) async -> Result<Claims, RejectedSignature> {
        // One token, one spelling: a padded or otherwise non-canonical part
        // would verify (base64 decoders forgive it) yet be a second string for
        // the same token to the cache, revocation by value and the journal.
        guard Self.isCanonicalCompactJWS(token) else { return .failure(RejectedSignature(failure: .malformed, tokenID: nil)) }
        let parsed: (header: JWTHeader, payload: Claims, signature: Data)
        do {
            parsed = try DefaultJWTParser().parse(Array(token.utf8), as: Claims.self)
        } catch {
            return .failure(RejectedSignature(failure: .malformed, tokenID: nil))
        }
        let jti = parsed.payload.tokenID
        // Checked before any key is touched: `alg: none` and algorithm-confusion
        // tokens are refused by name, not by a failed HMAC.
        guard parsed.header.alg == keyRing.algorithm.rawValue else { return .failure(RejectedSignature(failure: .wrongAlgorithm, tokenID: jti)) }
        // RFC 7515 section 4.1.11: extensions this server does not implement
        // must be refused; and a `kid` naming another key is not ours.
        guard parsed.header.fields["crit"] == nil else { return .failure(RejectedSignature(failure: .malformed, tokenID: jti)) }
        guard await knowsKey(parsed.header.kid) else { return .failure(RejectedSignature(failure: .badSignature, tokenID: jti)) }
        // Times beyond any clock this server can be set to cannot be compared as
        // whole seconds (and no token of ours carries them).
        let times = parsed.payload.times.map(\.timeIntervalSince1970)
        guard times.allSatisfy({ abs($0) < Self.latestTokenTime }) else { return .failure(RejectedSignature(failure: .malformed, tokenID: jti)) }
        let claims: Claims
        do {
            claims = try await keyRing.verify(token, as: Claims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            return .failure(RejectedSignature(failure: .badSignature, tokenID: jti))
        } catch {
            return .failure(RejectedSignature(failure: .malformed, tokenID: jti))
        }
        guard claims.iss.value == issuer else { return .failure(RejectedSignature(failure: .wrongIssuer, tokenID: jti)) }
        return .success(claims)
    }

    /// Whether `kid` names a key that verifies now. On a shared store a key
    /// this replica does not know may come from a rotation through another:
    /// the store's keys are read before the answer is no.
    private func knowsKey(_ kid: String?) async -> Bool {
        if keyRing.verifies(kid: kid, at: clock.now()) { return true }
        guard store.isShared, (try? await reloadKeys()) != nil else { return false }
        return keyRing.verifies(kid: kid, at: clock.now())
    }

    /// Seconds since 1970 beyond which no token time is accepted: real time
    /// plus the largest clock offset is far below it (about year 5138).
    static let latestTokenTime: Double = 1e11

    /// Three base64url parts without padding, each in its one canonical
    /// spelling (the unused low bits of the last character zero).
    static func isCanonicalCompactJWS(_ token: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return false }
        for part in parts {
            guard !part.utf8.contains(UInt8(ascii: "=")), let data = Data(base64URLEncoded: part) else { return false }
            guard data.base64URLEncodedString() == part else { return false }
        }
        return true
    }

    /// The claims of an access token signed by this server, whatever its
    /// expiry or revocation (dialects that accept an expired token as proof
    /// of which login a refresh belongs to); nil when the signature fails.
    public func signedClaims(_ token: String) async -> AccessTokenClaims? {
        if let known = verifiedTokens.withLock({ $0[TokenText(token)] }) { return known.claims }
        if case .success(let claims) = await checkSignature(token) { return claims }
        return nil
    }

    /// The grant of an access token this authority has just issued, from its
    /// own claims: the request it was issued for is served with it, whatever
    /// a concurrent request did to the login since (header rotation
    /// supersedes every other token of the login at once).
    public func grant(ofIssued issued: IssuedTokens) async -> AccessGrant? {
        await signedClaims(issued.accessToken).map { AccessGrant(claims: $0, key: issued.accessKey) }
    }

    /// What a refresh token is, without spending it (for journals and introspection).
    public func inspectRefreshToken(_ token: String) async throws -> RefreshTokenInfo? {
        try await store.refreshInfo(value: token, now: now(), grace: settings.reuseGrace)
    }

    // MARK: Revocation and introspection

    /// RFC 7009: revoking a refresh token revokes its family (and so the
    /// family's access tokens); revoking an access token revokes just it.
    /// Unknown tokens are ignored, as the RFC asks.
    public func revoke(token: String) async throws {
        let now = try await now()
        guard try await !store.revokeLogin(refreshValue: token, now: now) else { return }
        if case .valid(let grant) = try await verifyAccessToken(token) {
            try await store.revokeAccess(jti: grant.tokenID, now: now)
        }
    }

    public func introspect(token: String) async throws -> Introspection {
        if let info = try await inspectRefreshToken(token) {
            return info.failure == nil ? .refresh(info) : .inactive
        }
        if case .valid(let grant) = try await verifyAccessToken(token) { return .access(grant) }
        return .inactive
    }

    /// One of this server's id tokens with some claims replaced, signed
    /// again with the current key (an `id-token` fault rule).
    public func alteredIDToken(_ idToken: String, claims replaced: [String: String]) async throws -> String {
        var claims = try await keyRing.verify(idToken, as: IDTokenClaims.self)
        for (name, value) in replaced {
            switch name {
            case "iss": claims.iss = .init(value: value)
            case "sub": claims.sub = .init(value: value)
            case "aud": claims.aud = .init(value: [value])
            case "azp": claims.azp = value
            case "nonce": claims.nonce = value
            case "at_hash": claims.atHash = value
            case "sid": claims.sid = value
            default: claims.extra[name] = .string(value)
            }
        }
        var header = JWTHeader()
        header.typ = "JWT"
        return try await keyRing.sign(claims, header: header)
    }

    /// RP-initiated logout: the login an id token of this server names
    /// (`sid`) is revoked. False when the hint is not such an id token.
    /// Its expiry does not matter: a client signs out with an old one.
    public func endSession(idTokenHint: String) async throws -> Bool {
        guard let parsed = try? DefaultJWTParser().parse(Array(idTokenHint.utf8), as: IDTokenClaims.self),
            parsed.header.alg == keyRing.algorithm.rawValue, await knowsKey(parsed.header.kid),
            let claims = try? await keyRing.verify(idTokenHint, as: IDTokenClaims.self), claims.iss.value == issuer
        else { return false }
        if let sid = claims.sid, !sid.isEmpty { _ = try await revoke(TokenSelector(family: sid)) }
        return true
    }

    // MARK: Authorization codes

    public func createAuthorizationCode(
        clientID: String, subject: String, scope: String, redirectURI: String?,
        codeChallenge: String?, codeChallengeMethod: String?, nonce: String? = nil
    ) async throws -> String {
        let now = try await now()
        let code = RandomToken.make()
        try await store.createCode(
            code,
            AuthorizationCodeRecord(
                clientID: clientID, subject: subject, scope: scope, redirectURI: redirectURI,
                codeChallenge: codeChallenge, codeChallengeMethod: codeChallengeMethod,
                expiresAt: now.addingTimeInterval(Double(settings.authorizationCodeTTL)), used: false, nonce: nonce))
        return code
    }

    /// Redeems a one-time code; a second redemption fails and, per RFC 6749
    /// section 4.1.2, revokes what the first one issued.
    public func redeemAuthorizationCode(
        _ code: String, clientID: String, redirectURI: String?, codeVerifier: String?
    ) async throws -> Result<IssuedTokens, AuthorizationCodeFailure> {
        let redemption = CodeRedemption(clientID: clientID, redirectURI: redirectURI, codeVerifier: codeVerifier, now: try await now())
        switch try await store.redeemCode(code, redemption) {
        case .failure(let failure): return .failure(failure)
        case .success(let record):
            let issued = try await issue(subject: record.subject, clientID: record.clientID, scope: record.scope, nonce: record.nonce)
            if let family = issued.familyID { try await store.setCodeFamily(code, family: family) }
            return .success(issued)
        }
    }
}

/// What signature checks read of a token's claims, whichever kind it is.
protocol SignedClaims: JWTPayload {
    var iss: IssuerClaim { get }
    /// The `jti`, where the token has one.
    var tokenID: String? { get }
    /// `exp`, `iat` and `nbf`, each as far as the token has it.
    var times: [Date] { get }
}

extension AccessTokenClaims: SignedClaims {
    var tokenID: String? { jti.value }
    var times: [Date] { [exp.value, iat.value, nbf?.value ?? iat.value] }
}

extension IDTokenClaims: SignedClaims {
    var tokenID: String? { if case .string(let jti)? = extra["jti"] { jti } else { nil } }
    var times: [Date] { [exp.value, iat.value, authTime] }
}

private struct RejectedSignature: Error {
    var failure: AccessTokenFailure
    var tokenID: String?
}

extension Date {
    /// JWT times are whole seconds: `iat`/`nbf` round down and `exp` up, so
    /// the claims never promise less than the server grants. The server
    /// itself judges expiry by the exact time in its records.
    func wholeSeconds(_ rule: FloatingPointRoundingRule) -> Date {
        Date(timeIntervalSince1970: timeIntervalSince1970.rounded(rule))
    }
}
