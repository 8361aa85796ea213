import Crypto
public import Foundation

/// Where token state lives (docs/state.md): in this process's memory (the
/// default, fastest), or in a database that outlives the process and that
/// several server processes share (`SQLTokenStore`).
///
/// Every operation that decides something is one atomic step of the store
/// (a lock in memory, a transaction in a database), and every store reaches
/// its decisions through the same rules (`TokenRules`), so a store changes
/// where state is kept, never what the server answers.
public protocol TokenStore: Sendable {
    /// How `authmock serve` names it at start ("memory", "sqlite:PATH", ...).
    var name: String { get }
    /// True when other processes may change the state too (replicas), so the
    /// clock offset must be read from the store before each decision.
    var isShared: Bool { get }

    /// The key tokens are signed with: `configured` when it was given, else the
    /// one the store kept from an earlier run (a random one is kept for next time).
    func adoptSigningKey(_ configured: SigningKey) async throws -> SigningKey
    /// What other replicas may have changed: the clock offset and the
    /// version of the kept key pairs (one read, before each decision on a
    /// shared store).
    func sharedSettings() async throws -> SharedSettings
    func setClockOffset(_ seconds: Double) async throws
    /// The RS256/ES256 key pairs kept by the store, if any.
    func keptKeys() async throws -> KeptKeys?
    /// Keeps `fresh` unless keys of its algorithm are kept already (of
    /// replicas starting together, one set wins); returns what is kept.
    func adoptKeys(_ fresh: KeptKeys) async throws -> KeptKeys
    /// Replaces the kept keys (or `current`, when none are kept) by `edit`
    /// of them, atomically: a rotation through any replica.
    func updateKeys(from current: KeptKeys, _ edit: @escaping @Sendable (KeptKeys) -> KeptKeys) async throws -> KeptKeys

    /// Records a sign-in; its access record comes signed (its `tokenTail` set).
    func createLogin(_ login: NewLogin) async throws
    func createAccess(_ record: AccessRecord) async throws
    /// Uses a refresh token. The access token it issues is signed by `sign`
    /// inside the same atomic step, so the rotation and everything recorded
    /// of it happen together or not at all (a failure after it would answer
    /// 503 for a rotation that happened).
    func exchange(_ exchange: RefreshExchange, mint: TokenMint, sign: @escaping AccessSigner) async throws -> ExchangeOutcome
    func rotateAccess(familyID: String, now: Date, mint: TokenMint, sign: @escaping AccessSigner) async throws -> SignedAccess?
    /// The record of an access token and whether its login is revoked
    /// (its record's family, or `sid` when the record is gone).
    func accessState(jti: String, sid: String) async throws -> (record: AccessRecord?, familyRevoked: Bool)
    func refreshInfo(value: String, now: Date, grace: Int) async throws -> RefreshTokenInfo?
    /// Revokes the login of a refresh token; false when the value is not one.
    func revokeLogin(refreshValue: String, now: Date) async throws -> Bool
    func revokeAccess(jti: String, now: Date) async throws

    func createCode(_ code: String, _ record: AuthorizationCodeRecord) async throws
    func redeemCode(_ code: String, _ redemption: CodeRedemption) async throws -> Result<AuthorizationCodeRecord, AuthorizationCodeFailure>
    func setCodeFamily(_ code: String, family: String) async throws

    func expire(_ selector: TokenSelector, now: Date) async throws -> TokenChange
    func revoke(_ selector: TokenSelector, now: Date) async throws -> TokenChange
    func supersede(family: String, keep: TokenID, deadline: Date) async throws
    /// Revokes the access tokens of `family` issued before `keep`
    /// (`refresh_revokes_access`: a refresh revokes the token it replaces).
    func revokeEarlierAccess(family: String, keep: TokenID, now: Date) async throws
    func snapshot(now: Date) async throws -> TokenSnapshot
    func prune(now: Date, retention: Double, grace: Double) async throws -> PrunedCounts
    func prunedCounts() async throws -> PrunedCounts
    /// Forgets every token, family and code (the signing key stays).
    func reset() async throws
    /// Removes everything the store keeps, its tables too (a throwaway store's end).
    func discard() async throws
}

/// What a shared store's replicas change for each other besides tokens.
public struct SharedSettings: Sendable, Equatable {
    public var clockOffset: Double?
    public var keysVersion: Int?
    public init(clockOffset: Double? = nil, keysVersion: Int? = nil) {
        self.clockOffset = clockOffset
        self.keysVersion = keysVersion
    }
}

/// A store that could not be reached or answered with an error: the server
/// answers 503 `temporarily_unavailable`, never a verdict on the token.
public struct TokenStoreError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A new login: its family, first refresh token and first access token.
public struct NewLogin: Sendable {
    var family: FamilyRecord
    var refresh: RefreshRecord
    var access: AccessRecord
}

/// One use of a refresh token.
public struct RefreshExchange: Sendable {
    var value: String
    /// nil skips the client check (dialects without client authentication).
    var clientID: String?
    var rotate: Bool
    var now: Date
    /// When the request arrived (server clock); nil for callers outside HTTP.
    var arrivedAt: Date? = nil

    /// Whether this refresh arrived before `record` was rotated by another:
    /// the two met at once, before the first was decided.
    func overlaps(rotationOf record: RefreshRecord) -> Bool {
        guard case .rotated(let at) = record.state, let arrivedAt else { return false }
        return arrivedAt < at
    }
}

public enum ExchangeOutcome: Sendable {
    case failed(RefreshTokenFailure)
    case issued(SignedAccess, next: RefreshRecord?, family: FamilyRecord)
}

/// Signs a new access record: its JWT (the authority's keys, claims and issuer).
public typealias AccessSigner = @Sendable (AccessRecord) async throws -> String

/// An access record and the JWT issued for it (the record's `tokenTail` set).
public struct SignedAccess: Sendable {
    var record: AccessRecord
    var jwt: String

    /// Signs `record` and notes the token's tail in it.
    static func make(_ record: AccessRecord, _ sign: AccessSigner) async throws -> SignedAccess {
        var record = record
        let jwt = try await sign(record)
        record.tokenTail = String(jwt.suffix(6))
        return SignedAccess(record: record, jwt: jwt)
    }
}

/// One redemption of an authorization code.
public struct CodeRedemption: Sendable {
    var clientID: String
    var redirectURI: String?
    var codeVerifier: String?
    var now: Date
}

/// Makes new records: ids, sealed refresh values, lifetimes. Shared by every
/// store, so a record means the same whichever store made it.
public struct TokenMint: Sendable {
    let settings: TokenSettings
    let seal: RefreshTokenSeal

    func family(subject: String, clientID: String, scope: String, at now: Date) -> FamilyRecord {
        let id = RandomToken.shortID(prefix: "fam_")
        return FamilyRecord(id: id, owner: TokenOwner(familyID: id, subject: subject, clientID: clientID, scope: scope), createdAt: now)
    }

    func refresh(owner: TokenOwner, at now: Date) -> RefreshRecord {
        let expiresAt = now.addingTimeInterval(Double(settings.refreshTTL))
        return RefreshRecord(
            key: .randomRefreshID(), value: seal.token(owner: owner, issuedAt: now, expiresAt: expiresAt), familyID: owner.familyID ?? "",
            issuedAt: now, expiresAt: expiresAt, state: .live)
    }

    func access(owner: TokenOwner, at now: Date, ttl: Int? = nil) -> AccessRecord {
        let ttl = ttl ?? settings.accessTTL
        return AccessRecord(
            key: .accessID(sequence: AccessSequence.next(), issuedAt: now), owner: owner,
            issuedAt: now, expiresAt: now.addingTimeInterval(Double(ttl)), lifetime: Double(ttl))
    }

    func login(subject: String, clientID: String, scope: String, at now: Date) -> NewLogin {
        let family = family(subject: subject, clientID: clientID, scope: scope, at: now)
        return NewLogin(
            family: family, refresh: refresh(owner: family.owner, at: now),
            access: access(owner: family.owner, at: now, ttl: settings.signInAccessTTL ?? settings.accessTTL))
    }
}

/// The decisions, over records, that every store makes the same way.
enum TokenRules {
    enum Exchange {
        case fail(RefreshTokenFailure, revokeLogin: Bool)
        /// Issue new tokens; `retire` marks the presented token rotated.
        case pass(FamilyRecord, retire: Bool)
        /// A new access token beside `successor`, the refresh token that
        /// already replaced the presented one (`reused_parent: current_child`).
        case successor(FamilyRecord, RefreshRecord)
    }

    /// The successor a store reads before `exchange`: only where the policy
    /// can hand it back, since every reuse of a token waits on its row's lock
    /// and the extra read would lengthen that hold.
    static func successorToRead(_ record: RefreshRecord, settings: TokenSettings) -> TokenID? {
        settings.reusedParent == .currentChild && record.isRotated ? record.successor : nil
    }

    /// What using `record` (of login `family`) does now; `successor` is the
    /// record that replaced it, when it was rotated (`successorToRead`).
    static func exchange(
        _ record: RefreshRecord, family: FamilyRecord?, successor: RefreshRecord? = nil, _ exchange: RefreshExchange, settings: TokenSettings
    ) -> Exchange {
        if settings.reusedParent == .currentChild, record.isRotated, record.expiresAt > exchange.now, let family, family.revokedAt == nil,
            let successor,
            successor.state == .live, successor.expiresAt > exchange.now, exchange.clientID.map({ $0 == family.clientID }) ?? true
        {
            return .successor(family, successor)
        }
        // A backend with no lock between its check and its write (a blacklist checked, then written)
        // lets a refresh that arrived before the rotation was decided through as if it had come first.
        if settings.concurrentRefresh == .bothSucceed, exchange.overlaps(rotationOf: record), record.expiresAt > exchange.now,
            let family, family.revokedAt == nil
        {
            return pass(family, exchange, retire: false)
        }
        if let failure = failure(of: record, family: family, at: exchange.now, grace: settings.reuseGrace) {
            return .fail(failure, revokeLogin: failure == .reused && settings.refreshReuse == .revokeLogin)
        }
        guard let family else { return .fail(.unknown, revokeLogin: false) }
        return pass(family, exchange, retire: exchange.rotate && record.state == .live)
    }

    /// A refresh of `family` goes through, unless another client presents it.
    static func pass(_ family: FamilyRecord, _ exchange: RefreshExchange, retire: Bool) -> Exchange {
        if let clientID = exchange.clientID, family.clientID != clientID { return .fail(.clientMismatch, revokeLogin: false) }
        return .pass(family, retire: retire)
    }

    /// Why `record` cannot be exchanged now, or nil when it can.
    static func failure(of record: RefreshRecord, family: FamilyRecord?, at now: Date, grace: Int) -> RefreshTokenFailure? {
        if family?.revokedAt != nil { return .revoked }
        switch record.state {
        case .revoked: return .revoked
        case .rotated(let at):
            if now.timeIntervalSince(at) > Double(grace) || grace == 0 { return .reused }
        case .live: break
        }
        if record.expiresAt <= now { return .expired }
        return nil
    }

    /// What using a refresh token with no record does, judged from its seal
    /// as its record would have judged it (TokenPruning.swift): an unexpired
    /// token of a living login lost its record by rotation, so it is a reuse,
    /// or, where rotated tokens stay valid (`refresh_reuse: accept`), it is
    /// exchanged as its record would have been.
    static func exchangeUnrecorded(
        sealed: (family: String, expiresAt: Date)?, family: FamilyRecord?, _ exchange: RefreshExchange, settings: TokenSettings
    ) -> Exchange {
        guard let sealed else { return .fail(.unknown, revokeLogin: false) }
        guard let family else { return .fail(sealed.expiresAt <= exchange.now ? .expired : .unknown, revokeLogin: false) }
        if family.revokedAt != nil { return .fail(.revoked, revokeLogin: false) }
        if sealed.expiresAt <= exchange.now { return .fail(.expired, revokeLogin: false) }
        guard settings.refreshReuse == .accept else { return .fail(.reused, revokeLogin: settings.refreshReuse == .revokeLogin) }
        return pass(family, exchange, retire: false)
    }

    /// How many rotated refresh tokens a login keeps as records when pruning
    /// is on (`prune_after` > 0): the newest, as `AccessLedger` keeps the
    /// newest access tokens, so memory follows logins, not refreshes. An
    /// older one is judged from its seal (`exchangeUnrecorded`).
    static let rotatedKept = 32

    /// Why a code cannot be redeemed (other than having been used).
    static func failure(of code: AuthorizationCodeRecord, _ redemption: CodeRedemption) -> AuthorizationCodeFailure? {
        if code.expiresAt <= redemption.now { return .expired }
        if code.clientID != redemption.clientID { return .clientMismatch }
        if code.redirectURI != nil, code.redirectURI != redemption.redirectURI { return .redirectMismatch }
        if let challenge = code.codeChallenge {
            guard let verifier = redemption.codeVerifier else { return .pkceMissing }
            guard constantTimeEquals(PKCE.s256(verifier), challenge) else { return .pkceMismatch }
        }
        return nil
    }

    /// The snapshot's state word for an access token.
    static func state(of record: AccessRecord, familyRevoked: Bool, at now: Date) -> String {
        record.revokedAt != nil || familyRevoked ? "revoked" : record.expiresAt <= now ? "expired" : "live"
    }

    static func state(of record: RefreshRecord, familyRevoked: Bool, at now: Date) -> String {
        switch record.state {
        case .revoked: "revoked"
        case .rotated: "rotated"
        case .live: familyRevoked ? "revoked" : record.expiresAt <= now ? "expired" : "live"
        }
    }
}

/// RFC 7636 S256: base64url(SHA-256(verifier)).
enum PKCE {
    static func s256(_ verifier: String) -> String {
        Data(SHA256.hash(data: Data(verifier.utf8))).base64URLEncodedString()
    }
}
