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

    func matches(subject: String, family: String?, id: String) -> Bool {
        (self.subject == nil || self.subject == subject)
            && (self.family == nil || self.family == family)
            && (jti == nil || jti == id)
    }
}

/// How many tokens a control operation changed.
public struct TokenChange: Sendable, Equatable, Codable {
    public var access: Int
    public var refresh: Int
}

/// A listing of all token state, for `GET /_authmock/tokens`. Token values
/// appear only as a short tail, enough to tell tokens apart in a log.
public struct TokenSnapshot: Sendable, Codable, Equatable {
    public struct Family: Sendable, Codable, Equatable {
        public var id: String, subject: String, clientID: String, state: String, createdAt: Date
    }
    public struct Token: Sendable, Codable, Equatable {
        public var id: String, family: String?, subject: String, state: String, expiresAt: Date, tokenTail: String
        /// When it was issued, and the lifetime it was issued with (`expires_in`):
        /// `expiresAt` is earlier when a step or a rotation retired it early.
        public var issuedAt: Date?
        public var lifetimeSeconds: Double?
    }
    public var families: [Family]
    public var access: [Token]
    public var refresh: [Token]
    /// Records pruning removed so far (docs/configuration.md, "Pruning").
    public var pruned: PrunedCounts
}

extension TokenAuthority {
    /// Pulls the expiry of the selected tokens to now, as if their lifetime had run out.
    public func expire(_ selector: TokenSelector) -> TokenChange {
        let now = clock.now()
        return withState { state in
            var change = TokenChange(access: 0, refresh: 0)
            if selector.kind != .refresh {
                for (jti, record) in state.accessByID
                where record.expiresAt > now && selector.matches(subject: record.subject, family: record.familyID, id: jti) {
                    state.accessByID[jti]?.expiresAt = now
                    change.access += 1
                }
            }
            if selector.kind != .access {
                for (id, record) in state.refreshByID
                where record.expiresAt > now && selector.matches(subject: state.families[record.familyID]?.subject ?? "", family: record.familyID, id: id) {
                    state.refreshByID[id]?.expiresAt = now
                    change.refresh += 1
                }
            }
            return change
        }
    }

    /// Revokes the selected tokens. Selecting by family with kind `all`
    /// revokes the family itself, as reuse detection would.
    public func revoke(_ selector: TokenSelector) -> TokenChange {
        let now = clock.now()
        return withState { state in
            var change = TokenChange(access: 0, refresh: 0)
            if selector.kind != .refresh {
                for (jti, record) in state.accessByID
                where record.revokedAt == nil && selector.matches(subject: record.subject, family: record.familyID, id: jti) {
                    state.accessByID[jti]?.revokedAt = now
                    change.access += 1
                }
            }
            if selector.kind != .access {
                for (id, record) in state.refreshByID
                where !record.isRevoked && selector.matches(subject: state.families[record.familyID]?.subject ?? "", family: record.familyID, id: id) {
                    state.refreshByID[id]?.state = .revoked(at: now)
                    change.refresh += 1
                }
            }
            if selector.kind == .all, let family = selector.family, selector.jti == nil { state.revokeFamily(family, at: now) }
            return change
        }
    }

    public func snapshot() -> TokenSnapshot {
        let now = clock.now()
        return withState { state in
            let families = state.families.values.sorted { $0.createdAt < $1.createdAt || ($0.createdAt == $1.createdAt && $0.id < $1.id) }.map {
                TokenSnapshot.Family(id: $0.id, subject: $0.subject, clientID: $0.clientID, state: $0.revokedAt == nil ? "live" : "revoked", createdAt: $0.createdAt)
            }
            let access = state.accessByID.values.sorted { ($0.issuedAt, $0.jti) < ($1.issuedAt, $1.jti) }.map { record in
                let familyRevoked = record.familyID.flatMap { state.families[$0]?.revokedAt } != nil
                let status = record.revokedAt != nil || familyRevoked ? "revoked" : record.expiresAt <= now ? "expired" : "live"
                return TokenSnapshot.Token(
                    id: record.jti, family: record.familyID, subject: record.subject, state: status, expiresAt: record.expiresAt,
                    tokenTail: record.tokenTail, issuedAt: record.issuedAt, lifetimeSeconds: record.lifetime)
            }
            let refresh = state.refreshByID.values.sorted { ($0.issuedAt, $0.id) < ($1.issuedAt, $1.id) }.map { record in
                let status: String
                switch record.state {
                case .revoked: status = "revoked"
                case .rotated: status = "rotated"
                case .live: status = state.families[record.familyID]?.revokedAt != nil ? "revoked" : record.expiresAt <= now ? "expired" : "live"
                }
                return TokenSnapshot.Token(
                    id: record.id, family: record.familyID, subject: state.families[record.familyID]?.subject ?? "", state: status,
                    expiresAt: record.expiresAt, tokenTail: String(record.value.suffix(6)))
            }
            return TokenSnapshot(families: families, access: access, refresh: refresh, pruned: state.pruned)
        }
    }

    /// Access tokens of `family` other than `keep` stop working `grace`
    /// seconds from now: they were superseded by a rotated token.
    public func supersedeAccessTokens(family: String, keep: String, graceSeconds: Int) {
        let deadline = clock.now().addingTimeInterval(Double(graceSeconds))
        withState { state in
            for (jti, record) in state.accessByID where record.familyID == family && jti != keep && record.expiresAt > deadline {
                state.accessByID[jti]?.expiresAt = deadline
            }
        }
    }

    /// Forgets every token, family and code.
    public func reset() {
        withState { $0 = TokenState() }
        forgetVerifiedTokens()
    }
}
