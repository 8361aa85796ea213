public import Foundation
import Synchronization

/// Token state in this process's memory, behind one lock: the default store,
/// and the fastest. Gone when the process ends.
public final class MemoryTokenStore: TokenStore {
    private let state = Mutex(TokenState())
    private let keys = Mutex(KeptKeys?.none)

    public init() {}

    public var name: String { "memory" }
    public var isShared: Bool { false }

    public func adoptSigningKey(_ configured: SigningKey) -> SigningKey { configured }
    public func sharedSettings() -> SharedSettings { SharedSettings(keysVersion: keys.withLock { $0?.version }) }
    public func setClockOffset(_ seconds: Double) {}
    public func keptKeys() -> KeptKeys? { keys.withLock { $0 } }

    public func adoptKeys(_ fresh: KeptKeys) -> KeptKeys {
        keys.withLock { kept in
            if kept?.algorithm != fresh.algorithm { kept = fresh }
            return kept!
        }
    }

    public func updateKeys(from current: KeptKeys, _ edit: @escaping @Sendable (KeptKeys) -> KeptKeys) -> KeptKeys {
        keys.withLock { kept in
            let next = edit(kept ?? current)
            kept = next
            return next
        }
    }

    public func createLogin(_ login: NewLogin) {
        state.withLock { state in
            state.families[login.family.id] = login.family
            state.insert(login.refresh)
            state.admit(login.access)
        }
    }

    public func createAccess(_ record: AccessRecord) {
        state.withLock { $0.admit(record) }
    }

    /// The decision is one step under the lock; signing (async) follows it,
    /// and cannot fail in a way that leaves a half-recorded rotation here.
    public func exchange(_ exchange: RefreshExchange, mint: TokenMint, sign: @escaping AccessSigner) async throws -> ExchangeOutcome {
        switch decide(exchange, mint: mint) {
        case .failure(let failure): return .failed(failure)
        case .success(let issued): return .issued(try await signed(issued.access, sign), next: issued.next, family: issued.family)
        }
    }

    /// What a refresh recorded (its access token not signed yet).
    private struct Recorded {
        var access: AccessRecord
        var next: RefreshRecord?
        var family: FamilyRecord
    }

    /// Signs a record already kept, and keeps its tail.
    private func signed(_ record: AccessRecord, _ sign: AccessSigner) async throws -> SignedAccess {
        let signed = try await SignedAccess.make(record, sign)
        state.withLock { $0.updateAccess(record) { $0.tokenTail = signed.record.tokenTail } }
        return signed
    }

    private func decide(_ exchange: RefreshExchange, mint: TokenMint) -> Result<Recorded, RefreshTokenFailure> {
        state.withLock { state in
            let now = exchange.now
            let record = state.refreshByValue[exchange.value]
            let verdict: TokenRules.Exchange
            let familyID: String?
            if let record {
                let successor = TokenRules.successorToRead(record, settings: mint.settings).flatMap { state.refreshByID[$0] }
                verdict = TokenRules.exchange(
                    record, family: state.families[record.familyID], successor: successor, exchange, settings: mint.settings)
                familyID = record.familyID
            } else {
                let sealed = mint.seal.open(exchange.value)
                verdict = TokenRules.exchangeUnrecorded(
                    sealed: sealed, family: sealed.flatMap { state.families[$0.family] }, exchange, settings: mint.settings)
                familyID = sealed?.family
            }
            switch verdict {
            case .fail(let failure, let revoke):
                if revoke, let familyID { state.revokeFamily(familyID, at: now) }
                return .failure(failure)
            case .successor(let family, let successor):
                let access = mint.access(owner: family.owner, at: now)
                state.admit(access)
                return .success(Recorded(access: access, next: successor, family: family))
            case .pass(let family, let retire):
                var next: RefreshRecord? = nil
                if exchange.rotate {
                    next = mint.refresh(owner: family.owner, at: now)
                    state.insert(next!)
                }
                if retire, let record {
                    state.retire(record.key, successor: next?.key, at: now, keepingAll: mint.settings.pruneAfterSeconds == 0)
                }
                let access = mint.access(owner: family.owner, at: now)
                state.admit(access)
                return .success(Recorded(access: access, next: next, family: family))
            }
        }
    }

    public func rotateAccess(familyID: String, now: Date, mint: TokenMint, sign: @escaping AccessSigner) async throws -> SignedAccess? {
        let access: AccessRecord? = state.withLock { state in
            guard let family = state.families[familyID], family.revokedAt == nil else { return nil }
            let access = mint.access(owner: family.owner, at: now)
            state.admit(access)
            return access
        }
        guard let access else { return nil }
        return try await signed(access, sign)
    }

    /// A kept record only (the store's interface has no claims to derive one
    /// from); the authority asks `accessState(key:claims:)`.
    public func accessState(jti: String, sid: String) -> (record: AccessRecord?, familyRevoked: Bool) {
        let key = TokenID(jti)
        return state.withLock { state in
            let record = state.accessExceptions[key] ?? state.accessLedgers[sid]?.recent.last { $0.key == key }
            return (record, state.isRevoked(family: record == nil ? sid : record?.familyID))
        }
    }

    /// The record of a verified token, or the one its login's ledger derives
    /// from its claims (`AccessLedger`), and whether its login is revoked.
    public func accessState(key: TokenID, claims: AccessTokenClaims) -> (record: AccessRecord?, familyRevoked: Bool) {
        state.withLock { state in
            let record = state.access(key: key, claims: claims)
            return (record, state.isRevoked(family: record?.familyID ?? claims.sid))
        }
    }

    public func refreshInfo(value: String, now: Date, grace: Int) -> RefreshTokenInfo? {
        state.withLock { state in
            guard let record = state.refreshByValue[value], let family = state.families[record.familyID] else { return nil }
            return RefreshTokenInfo(record: record, family: family, at: now, grace: grace)
        }
    }

    public func revokeLogin(refreshValue: String, now: Date) -> Bool {
        state.withLock { state in
            guard let record = state.refreshByValue[refreshValue] else { return false }
            state.revokeFamily(record.familyID, at: now)
            return true
        }
    }

    public func revokeAccess(jti: String, now: Date) {
        state.withLock { state in
            _ = state.changeAccess(TokenSelector(kind: .access, jti: jti), cutoff: AccessCutoff(revokedAt: now), now: now) { record in
                guard record.revokedAt == nil else { return false }
                record.revokedAt = now
                return true
            }
        }
    }

    public func createCode(_ code: String, _ record: AuthorizationCodeRecord) {
        state.withLock { $0.codes[code] = record }
    }

    public func redeemCode(_ code: String, _ redemption: CodeRedemption) -> Result<AuthorizationCodeRecord, AuthorizationCodeFailure> {
        state.withLock { state in
            guard var record = state.codes[code] else { return .failure(.unknown) }
            if record.used {
                // RFC 6749 section 4.1.2: a second redemption revokes what the first issued.
                if let family = record.issuedFamily { state.revokeFamily(family, at: redemption.now) }
                return .failure(.used)
            }
            if let failure = TokenRules.failure(of: record, redemption) { return .failure(failure) }
            record.used = true
            state.codes[code] = record
            return .success(record)
        }
    }

    public func setCodeFamily(_ code: String, family: String) {
        state.withLock { $0.codes[code]?.issuedFamily = family }
    }

    public func expire(_ selector: TokenSelector, now: Date) -> TokenChange {
        let selected = selector.jti.map(TokenID.init)
        return state.withLock { state in
            var change = TokenChange(access: 0, refresh: 0)
            if selector.kind != .refresh {
                change.access = state.changeAccess(selector, cutoff: AccessCutoff(expiresAt: now), now: now) { record in
                    guard record.expiresAt > now else { return false }
                    record.expiresAt = now
                    return true
                }
            }
            if selector.kind != .access {
                for (id, record) in state.refreshByID
                where record.expiresAt > now
                    && selector.matches(subject: state.families[record.familyID]?.subject ?? "", family: record.familyID, id: id, selected: selected)
                {
                    state.refreshByID[id]?.expiresAt = now
                    change.refresh += 1
                }
            }
            return change
        }
    }

    public func revoke(_ selector: TokenSelector, now: Date) -> TokenChange {
        let selected = selector.jti.map(TokenID.init)
        return state.withLock { state in
            var change = TokenChange(access: 0, refresh: 0)
            if selector.kind != .refresh {
                change.access = state.changeAccess(selector, cutoff: AccessCutoff(revokedAt: now), now: now) { record in
                    guard record.revokedAt == nil else { return false }
                    record.revokedAt = now
                    return true
                }
            }
            if selector.kind != .access {
                for (id, record) in state.refreshByID
                where !record.isRevoked
                    && selector.matches(subject: state.families[record.familyID]?.subject ?? "", family: record.familyID, id: id, selected: selected)
                {
                    state.refreshByID[id]?.state = .revoked(at: now)
                    change.refresh += 1
                }
            }
            if selector.revokesLogin, let family = selector.family { state.revokeFamily(family, at: now) }
            return change
        }
    }

    public func supersede(family: String, keep: TokenID, deadline: Date) {
        state.withLock { state in
            // The kept token is reached by the cutoff too: its record, kept as an exception once it leaves the ledger, says otherwise.
            _ = state.changeAccess(TokenSelector(kind: .access, family: family), cutoff: AccessCutoff(expiresAt: deadline), now: deadline) { record in
                guard record.key != keep, record.expiresAt > deadline else { return false }
                record.expiresAt = deadline
                return true
            }
        }
    }

    public func revokeEarlierAccess(family: String, keep: TokenID, now: Date) {
        guard let kept = keep.accessSequence, kept > 0 else { return }
        state.withLock { state in
            _ = state.changeAccess(TokenSelector(kind: .access, family: family), cutoff: AccessCutoff(revokedAt: now), upTo: kept - 1, now: now) {
                record in
                guard (record.key.accessSequence ?? 0) < kept, record.revokedAt == nil else { return false }
                record.revokedAt = now
                return true
            }
        }
    }

    public func snapshot(now: Date) -> TokenSnapshot {
        state.withLock { state in
            TokenSnapshot(
                families: Array(state.families.values), access: state.accessRecords, refresh: Array(state.refreshByID.values),
                pruned: state.pruned, at: now)
        }
    }

    public func prune(now: Date, retention: Double, grace: Double) -> PrunedCounts {
        state.withLock { $0.prune(now: now, retention: retention, grace: grace) }
    }

    public func prunedCounts() -> PrunedCounts { state.withLock { $0.pruned } }

    public func reset() {
        state.withLock { $0 = TokenState() }
    }

    public func discard() { reset() }
}

extension RefreshTokenInfo {
    init(record: RefreshRecord, family: FamilyRecord, at now: Date, grace: Int) {
        self.init(
            id: record.id, familyID: family.id, subject: family.subject, clientID: family.clientID,
            scope: family.scope, expiresAt: record.expiresAt,
            failure: TokenRules.failure(of: record, family: family, at: now, grace: grace),
            rotated: record.isRotated)
    }
}

extension TokenSelector {
    /// Selecting a login with kind `all` revokes the login itself, as reuse detection would.
    var revokesLogin: Bool { kind == .all && family != nil && jti == nil }
}
