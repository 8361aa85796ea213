import Foundation

/// One login: the chain of refresh tokens it rotated through and the access
/// tokens they produced. Revoking it revokes all of them.
public struct FamilyRecord: Sendable {
    var id: String
    /// Shared by every access token of this login.
    let owner: TokenOwner
    var subject: String { owner.subject }
    var clientID: String { owner.clientID }
    var scope: String { owner.scope }
    var createdAt: Date
    var revokedAt: Date?
}

/// Who an access token was issued to. One per login, shared by its access
/// records: at full refresh rate the records of the last minute are the
/// server's largest table, and four strings apiece made it twice the size.
public final class TokenOwner: Sendable {
    let familyID: String?
    let subject: String
    let clientID: String
    let scope: String

    init(familyID: String?, subject: String, clientID: String, scope: String) {
        self.familyID = familyID
        self.subject = subject
        self.clientID = clientID
        self.scope = scope
    }
}

public struct RefreshRecord: Sendable {
    enum State: Sendable, Equatable {
        case live
        case rotated(at: Date)
        case revoked(at: Date)
    }
    /// The id (`rt_` and hex), inline.
    var key: TokenID
    var id: String { key.text }
    var value: String
    var familyID: String
    var issuedAt: Date
    var expiresAt: Date
    var state: State
    /// The token that replaced this one at rotation (`reused_parent: current_child` hands it back).
    var successor: TokenID? = nil

    var isRotated: Bool {
        if case .rotated = state { return true }
        return false
    }

    var isRevoked: Bool {
        if case .revoked = state { return true }
        return false
    }
}

public struct AccessRecord: Sendable {
    /// The `jti`, inline.
    var key: TokenID
    var jti: String { key.text }
    let owner: TokenOwner
    var familyID: String? { owner.familyID }
    var subject: String { owner.subject }
    var clientID: String { owner.clientID }
    var scope: String { owner.scope }
    var issuedAt: Date
    /// May be pulled forward by a forced expiry; the JWT's `exp` cannot change.
    var expiresAt: Date
    /// Seconds it was issued to live (what `expires_in` said).
    var lifetime: Double
    var revokedAt: Date?
    /// Last characters of the signed JWT, for listings.
    var tokenTail: String = ""

    /// The JWT's `exp`: `iat` (the issue time's whole second) plus the
    /// lifetime, so `exp - iat` is what `expires_in` said, as at the vendors.
    var expClaim: Date { issuedAt.wholeSeconds(.down).addingTimeInterval(lifetime) }
}

public struct AuthorizationCodeRecord: Sendable {
    var clientID: String
    var subject: String
    var scope: String
    var redirectURI: String?
    var codeChallenge: String?
    var codeChallengeMethod: String?
    var expiresAt: Date
    var used: Bool
    /// The authorization request's `nonce`, echoed in the id token (OIDC).
    var nonce: String? = nil
    var issuedFamily: String?
}

/// All token state of a `MemoryTokenStore`; only ever touched inside its lock.
struct TokenState: Sendable {
    /// Records removed so far by pruning, for the control API.
    var pruned = PrunedCounts()
    var families: [String: FamilyRecord] = [:]
    var refreshByID: [TokenID: RefreshRecord] = [:]
    var refreshIDByValue: [String: TokenID] = [:]
    /// Per login, its rotated refresh tokens still kept as records, oldest
    /// first (at most `TokenRules.rotatedKept` while pruning is on).
    var rotatedByFamily: [String: [TokenID]] = [:]
    /// Access tokens, by login (or client and subject): no record per token (`AccessLedger`).
    var accessLedgers: [String: AccessLedger] = [:]
    /// Records of tokens no ledger lists whose state their claims and cutoffs do not tell.
    var accessExceptions: [TokenID: AccessRecord] = [:]
    /// A forced expiry or revocation by `jti` of a token no ledger lists any more.
    var accessOverrides: [TokenID: [AccessCutoff]] = [:]
    /// The issue order of the latest access token kept: a cutoff reaches up to it.
    var lastAccessSequence: UInt64 = 0
    /// The longest lifetime of any access token kept (how long an override may matter).
    var longestAccessLifetime: Double = 0
    var codes: [String: AuthorizationCodeRecord] = [:]

    var refreshByValue: RefreshLookup { RefreshLookup(state: self) }

    mutating func insert(_ record: RefreshRecord) {
        refreshByID[record.key] = record
        refreshIDByValue[record.value] = record.key
    }

    /// Marks `key` rotated (replaced by `successor`); with pruning on, the
    /// login's oldest rotated record beyond `TokenRules.rotatedKept` goes,
    /// its token judged from its seal from then on.
    mutating func retire(_ key: TokenID, successor: TokenID?, at now: Date, keepingAll: Bool) {
        guard var record = refreshByID[key] else { return }
        record.state = .rotated(at: now)
        record.successor = successor
        refreshByID[key] = record
        guard !keepingAll else { return }
        rotatedByFamily[record.familyID, default: []].append(key)
        guard let rotated = rotatedByFamily[record.familyID], rotated.count > TokenRules.rotatedKept else { return }
        let oldest = rotated[0]
        rotatedByFamily[record.familyID]?.removeFirst()
        // One a control step revoked on its own since is kept: its record says so.
        if let dropped = refreshByID[oldest], dropped.isRotated {
            refreshByID[oldest] = nil
            refreshIDByValue[dropped.value] = nil
            pruned.refresh += 1
        }
    }

    mutating func revokeFamily(_ id: String, at now: Date) {
        guard families[id]?.revokedAt == nil else { return }
        families[id]?.revokedAt = now
    }

    func isRevoked(family id: String?) -> Bool {
        id.flatMap { families[$0]?.revokedAt } != nil
    }
}

/// Read-only refresh lookup by token value.
struct RefreshLookup {
    let state: TokenState
    subscript(value: String) -> RefreshRecord? {
        state.refreshIDByValue[value].flatMap { state.refreshByID[$0] }
    }
}
