import Foundation

/// One login: the chain of refresh tokens it rotated through and the access
/// tokens they produced. Revoking it revokes all of them.
struct FamilyRecord: Sendable {
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
final class TokenOwner: Sendable {
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

struct RefreshRecord: Sendable {
    enum State: Sendable, Equatable {
        case live
        case rotated(at: Date)
        case revoked(at: Date)
    }
    var id: String
    var value: String
    var familyID: String
    var issuedAt: Date
    var expiresAt: Date
    var state: State

    var isRotated: Bool {
        if case .rotated = state { return true }
        return false
    }

    var isRevoked: Bool {
        if case .revoked = state { return true }
        return false
    }
}

struct AccessRecord: Sendable {
    var jti: String
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
}

struct AuthorizationCodeRecord: Sendable {
    var clientID: String
    var subject: String
    var scope: String
    var redirectURI: String?
    var codeChallenge: String?
    var codeChallengeMethod: String?
    var expiresAt: Date
    var used: Bool
    var issuedFamily: String?
}

/// All token state; only ever touched inside `TokenAuthority`'s lock.
struct TokenState: Sendable {
    /// Records removed so far by pruning, for the control API.
    var pruned = PrunedCounts()
    /// Token-issuing operations since the last pruning pass.
    var issuedSincePrune = 0
    /// Server-clock time of the last pruning pass.
    var lastPrune: Date?
    var families: [String: FamilyRecord] = [:]
    var refreshByID: [String: RefreshRecord] = [:]
    var refreshIDByValue: [String: String] = [:]
    var accessByID: [String: AccessRecord] = [:]
    var codes: [String: AuthorizationCodeRecord] = [:]

    var refreshByValue: RefreshLookup { RefreshLookup(state: self) }

    mutating func newFamily(subject: String, clientID: String, scope: String, at now: Date) -> String {
        let id = RandomToken.shortID(prefix: "fam_")
        families[id] = FamilyRecord(id: id, owner: TokenOwner(familyID: id, subject: subject, clientID: clientID, scope: scope), createdAt: now)
        return id
    }

    mutating func newRefreshToken(family: String, at now: Date, ttl: Int, seal: RefreshTokenSeal) -> RefreshRecord {
        let expiresAt = now.addingTimeInterval(Double(ttl))
        let record = RefreshRecord(
            id: RandomToken.shortID(prefix: "rt_"), value: seal.make(family: family, expiresAt: expiresAt), familyID: family,
            issuedAt: now, expiresAt: expiresAt, state: .live)
        refreshByID[record.id] = record
        refreshIDByValue[record.value] = record.id
        return record
    }

    mutating func newAccessToken(
        subject: String, clientID: String, scope: String, family: String?, at now: Date, ttl: Int
    ) -> AccessRecord {
        // The login's owner when it says the same (it always does today); a new one otherwise.
        let owner =
            family.flatMap { families[$0]?.owner }.flatMap { $0.subject == subject && $0.clientID == clientID && $0.scope == scope ? $0 : nil }
            ?? TokenOwner(familyID: family, subject: subject, clientID: clientID, scope: scope)
        let record = AccessRecord(
            jti: UUID().uuidString.lowercased(), owner: owner,
            issuedAt: now, expiresAt: now.addingTimeInterval(Double(ttl)), lifetime: Double(ttl))
        accessByID[record.jti] = record
        return record
    }

    /// Why `record` cannot be exchanged now, or nil when it can.
    func failure(of record: RefreshRecord, at now: Date, grace: Int) -> RefreshTokenFailure? {
        if families[record.familyID]?.revokedAt != nil { return .revoked }
        switch record.state {
        case .revoked: return .revoked
        case .rotated(let at):
            if now.timeIntervalSince(at) > Double(grace) || grace == 0 { return .reused }
        case .live: break
        }
        if record.expiresAt <= now { return .expired }
        return nil
    }

    mutating func revokeFamily(_ id: String, at now: Date) {
        guard families[id]?.revokedAt == nil else { return }
        families[id]?.revokedAt = now
    }
}

/// Read-only refresh lookup by token value.
struct RefreshLookup {
    let state: TokenState
    subscript(value: String) -> RefreshRecord? {
        state.refreshIDByValue[value].flatMap { state.refreshByID[$0] }
    }
}
