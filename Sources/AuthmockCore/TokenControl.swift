public import Foundation

/// Which tokens a control operation touches. Every field narrows the match;
/// an empty selector matches every token of `kind`.
public struct TokenSelector: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case access, refresh, all
    }
    public var kind: Kind
    public var subject: String?
    public var family: String?
    /// An access token's `jti` or a refresh token's id (`rt_...`).
    public var jti: String?

    public init(kind: Kind = .all, subject: String? = nil, family: String? = nil, jti: String? = nil) {
        self.kind = kind
        self.subject = subject
        self.family = family
        self.jti = jti
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = try c.decodeIfPresent(Kind.self, forKey: .kind) ?? .all
        subject = try c.decodeIfPresent(String.self, forKey: .subject)
        family = try c.decodeIfPresent(String.self, forKey: .family)
        jti = try c.decodeIfPresent(String.self, forKey: .jti)
    }

    /// `selected` is `jti` as a `TokenID`, read once per pass over a table.
    func matches(subject: String, family: String?, id: TokenID, selected: TokenID?) -> Bool {
        (self.subject == nil || self.subject == subject)
            && (self.family == nil || self.family == family)
            && (selected == nil || selected == id)
    }
}

/// How many tokens a control operation changed.
public struct TokenChange: Sendable, Equatable, Codable {
    public var access: Int
    public var refresh: Int

    public init(access: Int, refresh: Int) {
        self.access = access
        self.refresh = refresh
    }
}

/// A listing of all token state, for `GET /_authmock/tokens`. Token values
/// appear only as a short tail, enough to tell tokens apart in a log.
public struct TokenSnapshot: Sendable, Codable, Equatable {
    public struct Family: Sendable, Codable, Equatable {
        public var id: String, subject: String, clientID: String, state: String, createdAt: Date

        public init(id: String, subject: String, clientID: String, state: String, createdAt: Date) {
            (self.id, self.subject, self.clientID, self.state, self.createdAt) = (id, subject, clientID, state, createdAt)
        }
    }
    public struct Token: Sendable, Codable, Equatable {
        public var id: String, family: String?, subject: String, state: String, expiresAt: Date, tokenTail: String
        /// When it was issued, and the lifetime it was issued with (`expires_in`):
        /// `expiresAt` is earlier when a step or a rotation retired it early.
        public var issuedAt: Date?
        public var lifetimeSeconds: Double?

        public init(
            id: String, family: String?, subject: String, state: String, expiresAt: Date, tokenTail: String, issuedAt: Date? = nil,
            lifetimeSeconds: Double? = nil
        ) {
            (self.id, self.family, self.subject, self.state, self.expiresAt, self.tokenTail) = (id, family, subject, state, expiresAt, tokenTail)
            (self.issuedAt, self.lifetimeSeconds) = (issuedAt, lifetimeSeconds)
        }
    }
    public var families: [Family]
    public var access: [Token]
    public var refresh: [Token]
    /// Records pruning removed so far (docs/configuration.md, "Pruning").
    public var pruned: PrunedCounts

    public init(families: [Family], access: [Token], refresh: [Token], pruned: PrunedCounts) {
        (self.families, self.access, self.refresh, self.pruned) = (families, access, refresh, pruned)
    }
}

extension TokenSnapshot {
    /// The listing of these records, oldest first (every store lists the same way).
    init(families: [FamilyRecord], access: [AccessRecord], refresh: [RefreshRecord], pruned: PrunedCounts, at now: Date) {
        let revoked = Set(families.filter { $0.revokedAt != nil }.map(\.id))
        let subjects = Dictionary(families.map { ($0.id, $0.subject) }, uniquingKeysWith: { a, _ in a })
        self.families = families.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }.map {
            Family(id: $0.id, subject: $0.subject, clientID: $0.clientID, state: $0.revokedAt == nil ? "live" : "revoked", createdAt: $0.createdAt)
        }
        self.access = access.sorted { ($0.issuedAt, $0.jti) < ($1.issuedAt, $1.jti) }.map { record in
            Token(
                id: record.jti, family: record.familyID, subject: record.subject,
                state: TokenRules.state(of: record, familyRevoked: record.familyID.map(revoked.contains) ?? false, at: now),
                expiresAt: record.expiresAt, tokenTail: record.tokenTail, issuedAt: record.issuedAt, lifetimeSeconds: record.lifetime)
        }
        self.refresh = refresh.sorted { ($0.issuedAt, $0.id) < ($1.issuedAt, $1.id) }.map { record in
            Token(
                id: record.id, family: record.familyID, subject: subjects[record.familyID] ?? "",
                state: TokenRules.state(of: record, familyRevoked: revoked.contains(record.familyID), at: now),
                expiresAt: record.expiresAt, tokenTail: String(record.value.suffix(6)))
        }
        self.pruned = pruned
    }
}

extension TokenAuthority {
    /// Pulls the expiry of the selected tokens to now, as if their lifetime had run out.
    public func expire(_ selector: TokenSelector) async throws -> TokenChange {
        try await store.expire(selector, now: now())
    }

    /// Revokes the selected tokens. Selecting by family with kind `all`
    /// revokes the family itself, as reuse detection would.
    public func revoke(_ selector: TokenSelector) async throws -> TokenChange {
        try await store.revoke(selector, now: now())
    }

    public func snapshot() async throws -> TokenSnapshot {
        try await store.snapshot(now: now())
    }

    /// Access tokens of `family` other than `keep` stop working `grace`
    /// seconds from now: they were superseded by a rotated token.
    public func supersedeAccessTokens(family: String, keep: TokenID, graceSeconds: Int) async throws {
        try await store.supersede(family: family, keep: keep, deadline: now().addingTimeInterval(Double(graceSeconds)))
    }

    /// Forgets every token, family and code.
    public func reset() async throws {
        try await store.reset()
        forgetVerifiedTokens()
    }
}
