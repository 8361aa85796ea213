import Crypto
public import Foundation
import JWTKit
import Synchronization

/// Tokens handed out by one grant: what every profile encodes in its own shape.
public struct IssuedTokens: Sendable, Equatable {
    public var accessToken: String
    public var accessTokenID: String
    public var expiresIn: Int
    public var refreshToken: String?
    public var refreshTokenID: String?
    public var scope: String
    public var familyID: String?
}

/// A verified, live access token.
public struct AccessGrant: Sendable, Equatable {
    public var claims: AccessTokenClaims
    public var tokenID: String { claims.jti.value }
    public var subject: String { claims.sub.value }
    public var scopes: [String] { claims.scopes }

    /// Whether the token grants `scope` (no array built: asked on every request).
    public func grants(scope: String) -> Bool {
        claims.scope.utf8.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true).lazy.contains { $0.elementsEqual(scope.utf8) }
    }
}

public enum AccessVerification: Sendable, Equatable {
    case valid(AccessGrant)
    /// `tokenID` is the `jti` when the token could be read at all.
    case invalid(AccessTokenFailure, tokenID: String?)
}

/// What the server knows about a presented refresh token, without using it.
public struct RefreshTokenInfo: Sendable, Equatable {
    public var id: String
    public var familyID: String
    public var subject: String
    public var clientID: String
    public var scope: String
    public var expiresAt: Date
    /// `nil` when the token is usable now.
    public var failure: RefreshTokenFailure?
    /// Already exchanged once (usable only inside the reuse grace window).
    public var rotated: Bool
}

/// RFC 7662 view of a token.
public enum Introspection: Sendable, Equatable {
    case inactive
    case access(AccessGrant)
    case refresh(RefreshTokenInfo)
}

/// The token core: issues, verifies, rotates and revokes tokens against the
/// virtual clock. It holds all token state behind one lock; signing and
/// signature checks run outside it.
public final class TokenAuthority: Sendable {
    public let clock: VirtualClock
    public let settings: TokenSettings
    public let keyID: String
    private let keys: JWTKeyCollection
    private let state = Mutex(TokenState())
    /// Verified token strings are immutable, so their signature is checked
    /// once; later uses pay only for the expiry and revocation checks.
    private let verifiedTokens = Mutex([String: AccessTokenClaims]())
    private static let verifiedTokensLimit = 100_000
    private let issuerBox: Mutex<String>
    let seal: RefreshTokenSeal
    /// A pruning pass runs after this many token-issuing operations, and
    /// once a quarter of the retention (at least a second) of the server
    /// clock has passed since the last one: a pass visits every record, so
    /// at full rate it must not run many times a second. It depends on no
    /// timer (tests are repeatable: they move the clock).
    static let pruneEvery = 1024

    public init(settings: TokenSettings, signingKey: SigningKey, clock: VirtualClock) async {
        self.settings = settings
        self.clock = clock
        self.keyID = signingKey.id
        self.issuerBox = Mutex(settings.issuer)
        self.seal = RefreshTokenSeal(signingKey: signingKey)
        self.keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(key: signingKey.key), digestAlgorithm: .sha256, kid: JWKIdentifier(string: signingKey.id))
    }

    /// `iss` of tokens issued from now on; starts as `settings.issuer` and is
    /// fixed once the server knows its real address (port 0).
    public var issuer: String { issuerBox.withLock { $0 } }

    public func setIssuer(_ issuer: String) {
        issuerBox.withLock { $0 = issuer }
    }

    // MARK: Issuing

    /// Signs in `user` through `client`: a new family with a refresh token and an access token.
    public func issue(subject: String, clientID: String, scope: String) async throws -> IssuedTokens {
        let now = clock.now()
        let (family, refresh, access) = state.withLock { state in
            let family = state.newFamily(subject: subject, clientID: clientID, scope: scope, at: now)
            let refresh = state.newRefreshToken(family: family, at: now, ttl: settings.refreshTTL, seal: seal)
            let access = state.newAccessToken(
                subject: subject, clientID: clientID, scope: scope, family: family, at: now, ttl: settings.signInAccessTTL ?? settings.accessTTL)
            return (family, refresh, access)
        }
        return try await tokens(access: access, refresh: refresh, familyID: family)
    }

    /// `client_credentials`: an access token with no refresh token and no family.
    public func issueWithoutRefresh(subject: String, clientID: String, scope: String) async throws -> IssuedTokens {
        let now = clock.now()
        let access = state.withLock {
            $0.newAccessToken(subject: subject, clientID: clientID, scope: scope, family: nil, at: now, ttl: settings.accessTTL)
        }
        return try await tokens(access: access, refresh: nil, familyID: nil)
    }

    /// Exchanges a refresh token. `clientID` nil skips the client check (for
    /// dialects without client authentication). On reuse of a rotated token
    /// past the grace window the whole family is revoked.
    /// `rotate` overrides the server setting (header rotation keeps its refresh token).
    public func refresh(_ token: String, clientID: String?, rotate: Bool? = nil) async throws -> Result<IssuedTokens, RefreshTokenFailure> {
        let now = clock.now()
        let outcome: Result<(AccessRecord, RefreshRecord?, String), RefreshTokenFailure> = state.withLock { state in
            guard let record = state.refreshByValue[token] else { return .failure(state.failureOfUnrecorded(token, seal: seal, at: now)) }
            if let failure = state.failure(of: record, at: now, grace: settings.reuseGraceSeconds) {
                if failure == .reused { state.revokeFamily(record.familyID, at: now) }
                return .failure(failure)
            }
            let family = state.families[record.familyID]!
            if let clientID, family.clientID != clientID { return .failure(.clientMismatch) }
            var next: RefreshRecord? = nil
            if rotate ?? settings.rotateRefreshTokens {
                if case .live = record.state { state.refreshByID[record.id]?.state = .rotated(at: now) }
                next = state.newRefreshToken(family: family.id, at: now, ttl: settings.refreshTTL, seal: seal)
            }
            let access = state.newAccessToken(
                subject: family.subject, clientID: family.clientID, scope: family.scope,
                family: family.id, at: now, ttl: settings.accessTTL)
            return .success((access, next, family.id))
        }
        switch outcome {
        case .failure(let failure): return .failure(failure)
        case .success(let (access, next, family)):
            var issued = try await tokens(access: access, refresh: next, familyID: family)
            if next == nil { issued.refreshToken = nil }
            return .success(issued)
        }
    }

    /// A new access token in an existing family, for dialects that rotate the
    /// access token through a response header.
    public func reissueAccessToken(familyID: String) async throws -> IssuedTokens? {
        let now = clock.now()
        let access: AccessRecord? = state.withLock { state in
            guard let family = state.families[familyID], family.revokedAt == nil else { return nil }
            return state.newAccessToken(
                subject: family.subject, clientID: family.clientID, scope: family.scope,
                family: family.id, at: now, ttl: settings.accessTTL)
        }
        guard let access else { return nil }
        return try await tokens(access: access, refresh: nil, familyID: familyID)
    }

    /// Counts a token-issuing operation and prunes every `pruneEvery` of them.
    func notePruning(at now: Date) {
        guard settings.pruneAfterSeconds > 0 else { return }
        let gap = max(1, Double(settings.pruneAfterSeconds) / 4)
        let due = state.withLock { state in
            state.issuedSincePrune += 1
            return state.issuedSincePrune >= Self.pruneEvery && state.lastPrune.map { now.timeIntervalSince($0) >= gap } ?? true
        }
        if due { prune(at: now) }
    }

    /// One pruning pass now (the control API's `tokens/prune`, and every
    /// `pruneEvery` issuing operations); returns what it removed.
    @discardableResult
    public func prune(at now: Date? = nil) -> PrunedCounts {
        let now = now ?? clock.now()
        let retention = Double(settings.pruneAfterSeconds)
        let removed = state.withLock { state in
            state.issuedSincePrune = 0
            state.lastPrune = now
            return state.prune(now: now, retention: retention, grace: Double(settings.reuseGraceSeconds))
        }
        let horizon = now.addingTimeInterval(-retention)
        verifiedTokens.withLock { $0.removeEntries { $0.value.exp.value <= horizon } }
        return removed
    }

    /// Records pruned so far.
    public var prunedCounts: PrunedCounts { state.withLock { $0.pruned } }

    /// Runs `body` inside the state lock (for the control operations).
    func withState<T: Sendable>(_ body: (inout TokenState) -> T) -> T {
        state.withLock { body(&$0) }
    }

    func forgetVerifiedTokens() {
        verifiedTokens.withLock { $0.removeAll() }
    }

    private func tokens(access: AccessRecord, refresh: RefreshRecord?, familyID: String?) async throws -> IssuedTokens {
        notePruning(at: access.issuedAt)
        let claims = AccessTokenClaims(
            iss: .init(value: issuer), sub: .init(value: access.subject),
            aud: .init(value: settings.audience), exp: .init(value: access.expiresAt.wholeSeconds(.up)),
            iat: .init(value: access.issuedAt.wholeSeconds(.down)), nbf: .init(value: access.issuedAt.wholeSeconds(.down)),
            jti: .init(value: access.jti), clientID: access.clientID, scope: access.scope,
            sid: familyID ?? "")
        var header = JWTHeader()
        header.typ = "at+jwt"
        let jwt = try await keys.sign(claims, kid: JWKIdentifier(string: keyID), header: header)
        let tail = String(jwt.suffix(6))
        state.withLock { $0.accessByID[access.jti]?.tokenTail = tail }
        return IssuedTokens(
            accessToken: jwt, accessTokenID: access.jti, expiresIn: Int(access.lifetime),
            refreshToken: refresh?.value, refreshTokenID: refresh?.id, scope: access.scope, familyID: familyID)
    }

    // MARK: Verifying

    /// Judges a presented access token. Never throws: every way a token can be
    /// bad is an `AccessTokenFailure`.
    public func verifyAccessToken(_ token: String?) async -> AccessVerification {
        guard let token, !token.isEmpty else { return .invalid(.missing, tokenID: nil) }
        let claims: AccessTokenClaims
        if let known = verifiedTokens.withLock({ $0[token] }) {
            claims = known
        } else {
            switch await checkSignature(token) {
            case .failure(let rejected): return .invalid(rejected.failure, tokenID: rejected.tokenID)
            case .success(let verified):
                claims = verified
                verifiedTokens.withLock { cache in
                    if cache.count >= Self.verifiedTokensLimit { cache.removeAll(keepingCapacity: true) }
                    cache[token] = verified
                }
            }
        }
        let jti = claims.jti.value
        guard claims.aud.value.contains(settings.audience) else { return .invalid(.wrongAudience, tokenID: jti) }
        let now = clock.now()
        let failure: AccessTokenFailure? = state.withLock { state in
            guard let record = state.accessByID[jti] else {
                // Pruned (its exp passed long ago) or unknown to this server run.
                if state.families[claims.sid]?.revokedAt != nil { return .revoked }
                return claims.exp.value <= now ? .expired : .revoked
            }
            if record.revokedAt != nil { return .revoked }
            if let family = record.familyID, state.families[family]?.revokedAt != nil { return .revoked }
            if claims.nbf.value > now || claims.iat.value > now { return .notYetValid }
            if min(record.expiresAt, claims.exp.value) <= now { return .expired }
            return nil
        }
        if let failure { return .invalid(failure, tokenID: jti) }
        return .valid(AccessGrant(claims: claims))
    }

    private func checkSignature(_ token: String) async -> Result<AccessTokenClaims, RejectedSignature> {
        // One token, one spelling: a padded or otherwise non-canonical part
        // would verify (base64 decoders forgive it) yet be a second string for
        // the same token to the cache, revocation by value and the journal.
        guard Self.isCanonicalCompactJWS(token) else { return .failure(RejectedSignature(failure: .malformed, tokenID: nil)) }
        let parsed: (header: JWTHeader, payload: AccessTokenClaims, signature: Data)
        do {
            parsed = try DefaultJWTParser().parse(Array(token.utf8), as: AccessTokenClaims.self)
        } catch {
            return .failure(RejectedSignature(failure: .malformed, tokenID: nil))
        }
        let jti = parsed.payload.jti.value
        // Checked before any key is touched: `alg: none` and algorithm-confusion
        // tokens are refused by name, not by a failed HMAC.
        guard parsed.header.alg == "HS256" else { return .failure(RejectedSignature(failure: .wrongAlgorithm, tokenID: jti)) }
        // RFC 7515 section 4.1.11: extensions this server does not implement
        // must be refused; and a `kid` naming another key is not ours.
        guard parsed.header.fields["crit"] == nil else { return .failure(RejectedSignature(failure: .malformed, tokenID: jti)) }
        guard parsed.header.kid == keyID else { return .failure(RejectedSignature(failure: .badSignature, tokenID: jti)) }
        // Times beyond any clock this server can be set to cannot be compared as
        // whole seconds (and no token of ours carries them).
        let times = [parsed.payload.exp.value, parsed.payload.iat.value, parsed.payload.nbf.value].map(\.timeIntervalSince1970)
        guard times.allSatisfy({ abs($0) < Self.latestTokenTime }) else { return .failure(RejectedSignature(failure: .malformed, tokenID: jti)) }
        let claims: AccessTokenClaims
        do {
            claims = try await keys.verify(token, as: AccessTokenClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            return .failure(RejectedSignature(failure: .badSignature, tokenID: jti))
        } catch {
            return .failure(RejectedSignature(failure: .malformed, tokenID: jti))
        }
        guard claims.iss.value == issuer else { return .failure(RejectedSignature(failure: .wrongIssuer, tokenID: jti)) }
        return .success(claims)
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
        if let known = verifiedTokens.withLock({ $0[token] }) { return known }
        if case .success(let claims) = await checkSignature(token) { return claims }
        return nil
    }

    /// What a refresh token is, without spending it (for journals and introspection).
    public func inspectRefreshToken(_ token: String) -> RefreshTokenInfo? {
        let now = clock.now()
        return state.withLock { state in
            guard let record = state.refreshByValue[token], let family = state.families[record.familyID] else { return nil }
            return RefreshTokenInfo(
                id: record.id, familyID: family.id, subject: family.subject, clientID: family.clientID,
                scope: family.scope, expiresAt: record.expiresAt,
                failure: state.failure(of: record, at: now, grace: settings.reuseGraceSeconds),
                rotated: record.isRotated)
        }
    }

    // MARK: Revocation and introspection

    /// RFC 7009: revoking a refresh token revokes its family (and so the
    /// family's access tokens); revoking an access token revokes just it.
    /// Unknown tokens are ignored, as the RFC asks.
    public func revoke(token: String) async {
        let now = clock.now()
        let refreshFamily = state.withLock { state -> String? in
            guard let record = state.refreshByValue[token] else { return nil }
            state.revokeFamily(record.familyID, at: now)
            return record.familyID
        }
        guard refreshFamily == nil else { return }
        if case .valid(let grant) = await verifyAccessToken(token) {
            state.withLock { $0.accessByID[grant.tokenID]?.revokedAt = now }
        }
    }

    public func introspect(token: String) async -> Introspection {
        if let info = inspectRefreshToken(token) {
            return info.failure == nil ? .refresh(info) : .inactive
        }
        if case .valid(let grant) = await verifyAccessToken(token) { return .access(grant) }
        return .inactive
    }

    // MARK: Authorization codes

    public func createAuthorizationCode(
        clientID: String, subject: String, scope: String, redirectURI: String?,
        codeChallenge: String?, codeChallengeMethod: String?
    ) -> String {
        let now = clock.now()
        let code = RandomToken.make()
        state.withLock {
            $0.codes[code] = AuthorizationCodeRecord(
                clientID: clientID, subject: subject, scope: scope, redirectURI: redirectURI,
                codeChallenge: codeChallenge, codeChallengeMethod: codeChallengeMethod,
                expiresAt: now.addingTimeInterval(Double(settings.authorizationCodeTTL)), used: false)
        }
        return code
    }

    /// Redeems a one-time code; a second redemption fails and, per RFC 6749
    /// section 4.1.2, revokes what the first one issued.
    public func redeemAuthorizationCode(
        _ code: String, clientID: String, redirectURI: String?, codeVerifier: String?
    ) async throws -> Result<IssuedTokens, AuthorizationCodeFailure> {
        let now = clock.now()
        let checked: Result<AuthorizationCodeRecord, AuthorizationCodeFailure> = state.withLock { state in
            guard var record = state.codes[code] else { return .failure(.unknown) }
            if record.used {
                if let family = record.issuedFamily { state.revokeFamily(family, at: now) }
                return .failure(.used)
            }
            if record.expiresAt <= now { return .failure(.expired) }
            if record.clientID != clientID { return .failure(.clientMismatch) }
            if record.redirectURI != nil, record.redirectURI != redirectURI { return .failure(.redirectMismatch) }
            if let challenge = record.codeChallenge {
                guard let codeVerifier else { return .failure(.pkceMissing) }
                let computed = Data(SHA256.hash(data: Data(codeVerifier.utf8))).base64URLEncodedString()
                guard constantTimeEquals(computed, challenge) else { return .failure(.pkceMismatch) }
            }
            record.used = true
            state.codes[code] = record
            return .success(record)
        }
        switch checked {
        case .failure(let failure): return .failure(failure)
        case .success(let record):
            let issued = try await issue(subject: record.subject, clientID: record.clientID, scope: record.scope)
            state.withLock { $0.codes[code]?.issuedFamily = issued.familyID }
            return .success(issued)
        }
    }
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
