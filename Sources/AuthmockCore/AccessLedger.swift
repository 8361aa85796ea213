import Foundation
import JWTKit
import Synchronization

/// What the in-memory store keeps of the access tokens of one login (or, for
/// tokens issued without a login, of one client and subject): not a record
/// per token. At full refresh rate with hour-long tokens, a record per issued
/// token grew the server by hundreds of megabytes; a token is valid by its
/// signature, its claims, its login's state and the clock, so the store keeps
/// only what changes that answer:
///
/// - `recent`: the login's latest `recentLimit` tokens as records, which the
///   control API lists and counts (a login holds fewer than that unless a
///   load test refreshes it in a loop);
/// - `cutoffs`: each forced expiry or revocation of the whole login (a
///   step, `POST /_authmock/tokens/expire`, header rotation's supersession),
///   as "tokens issued up to this point expire or are revoked then";
/// - `TokenState.accessExceptions`: a token that left `recent` while the
///   cutoffs would judge it otherwise than its record (revoked alone,
///   expired alone, or the one a supersession kept), as its record.
///
/// A token the store holds no record of is judged as its record would have
/// been, from its claims and its `jti` (`TokenID.accessID`: its place in the
/// issue order and the microseconds `iat` lost), exactly to the microsecond.
struct AccessLedger: Sendable {
    static let recentLimit = 32

    /// Who the tokens belong to (a login's owner), for records made from claims.
    let owner: TokenOwner
    /// The latest tokens, oldest first.
    var recent: [AccessRecord] = []
    var cutoffs: [AccessCutoff] = []
    /// The latest `exp` of any token issued here: the ledger is kept until then (and the retention).
    var latestExpiry: Date

    init(owner: TokenOwner, latestExpiry: Date) {
        self.owner = owner
        self.latestExpiry = latestExpiry
    }

    /// The key of a token's ledger: its login, or its client and subject.
    static func key(family: String?, clientID: String, subject: String) -> String {
        family ?? "client \(clientID) \(subject)"
    }

    /// Lists a new token; returns a record the ledger cannot derive once it
    /// is no longer listed (or one made before a cutoff that came first to
    /// the store's lock), for the store to keep as an exception.
    mutating func admit(_ record: AccessRecord, sequence: UInt64) -> AccessRecord? {
        latestExpiry = max(latestExpiry, record.expiresAt)
        if cutoffs.contains(where: { sequence <= $0.upTo }) { return record }
        recent.append(record)
        guard recent.count > Self.recentLimit else { return nil }
        let evicted = recent.removeFirst()
        return derives(evicted) ? nil : evicted
    }

    /// A record of a token of this ledger that the store no longer holds:
    /// its claims' times made exact, with every cutoff since applied.
    func record(key: TokenID, issuedAtSecond: Date, expSecond: Date, scope: String, subject: String) -> AccessRecord {
        let microseconds = key.issueMicroseconds ?? 0
        let issuedAt = issuedAtSecond.addingTimeInterval(Double(microseconds) / 1_000_000)
        // `exp` is `iat` plus the lifetime (`AccessRecord.expClaim`).
        let lifetime = expSecond.timeIntervalSince(issuedAtSecond)
        let owner =
            owner.familyID == nil && (owner.scope != scope || owner.subject != subject)
            ? TokenOwner(familyID: nil, subject: subject, clientID: owner.clientID, scope: scope) : owner
        var record = AccessRecord(key: key, owner: owner, issuedAt: issuedAt, expiresAt: issuedAt.addingTimeInterval(lifetime), lifetime: lifetime)
        apply(cutoffs, to: &record)
        return record
    }

    /// The cutoffs made after `record` was issued, applied to it.
    func apply(_ cutoffs: [AccessCutoff], to record: inout AccessRecord) {
        let sequence = record.key.accessSequence ?? 0
        for cutoff in cutoffs where sequence <= cutoff.upTo {
            if let expiry = cutoff.expiresAt, expiry < record.expiresAt { record.expiresAt = expiry }
            if let revoked = cutoff.revokedAt, record.revokedAt == nil { record.revokedAt = revoked }
        }
    }

    /// Whether `record` is what the claims and cutoffs alone would say of it.
    func derives(_ record: AccessRecord) -> Bool {
        let derived = self.record(
            key: record.key, issuedAtSecond: record.issuedAt.wholeSeconds(.down),
            expSecond: record.expClaim,
            scope: record.scope, subject: record.subject)
        return abs(derived.expiresAt.timeIntervalSince(record.expiresAt)) < 0.000_002 && (derived.revokedAt == nil) == (record.revokedAt == nil)
    }
}

/// A forced expiry or revocation of every token of a ledger issued up to a point of the issue order.
struct AccessCutoff: Sendable {
    var upTo: UInt64 = 0
    var expiresAt: Date? = nil
    var revokedAt: Date? = nil
    /// The latest `exp` of the tokens it reaches: after it (and the retention) it changes no answer.
    var coveredUntil = Date.distantPast
}

/// The issue order of access tokens in this process (`TokenID.accessID`). One
/// counter for every store: a store compares only its own tokens, which it
/// makes under its lock, so its order is the counter's.
enum AccessSequence {
    private static let counter = Atomic<UInt64>(UInt64.random(in: 1..<(1 << 40)))

    static func next() -> UInt64 { counter.add(1, ordering: .relaxed).newValue }
}

extension TokenState {
    /// Keeps a newly issued access token in its ledger.
    mutating func admit(_ record: AccessRecord) {
        let key = AccessLedger.key(family: record.familyID, clientID: record.clientID, subject: record.subject)
        if accessLedgers[key] == nil { accessLedgers[key] = AccessLedger(owner: record.owner, latestExpiry: record.expiresAt) }
        longestAccessLifetime = max(longestAccessLifetime, record.lifetime)
        let sequence = record.key.accessSequence ?? 0
        lastAccessSequence = max(lastAccessSequence, sequence)
        // In place: a copy of the ledger would copy its records on every token.
        if let kept = accessLedgers[key]?.admit(record, sequence: sequence) { accessExceptions[kept.key] = kept }
    }

    /// Edits the kept record of a token just issued (its tail, once signed).
    mutating func updateAccess(_ record: AccessRecord, _ edit: (inout AccessRecord) -> Void) {
        let key = AccessLedger.key(family: record.familyID, clientID: record.clientID, subject: record.subject)
        if let index = accessLedgers[key]?.recent.lastIndex(where: { $0.key == record.key }) {
            edit(&accessLedgers[key]!.recent[index])
        } else if accessExceptions[record.key] != nil {
            edit(&accessExceptions[record.key]!)
        }
    }

    /// Removes what a pruning pass may (TokenPruning.swift): records R past
    /// their JWT's `exp`, cutoffs and overrides R past the last `exp` they
    /// reach, and ledgers with neither tokens to come nor records left.
    mutating func pruneAccess(horizon: Date) -> Int {
        // The JWT's exp (issue time plus lifetime) decides, not an earlier forced expiry.
        func spent(_ record: AccessRecord) -> Bool { record.issuedAt.addingTimeInterval(record.lifetime + 1) <= horizon }
        var removed = accessExceptions.removeEntries { spent($0.value) }
        accessOverrides.removeEntries { $0.value.allSatisfy { $0.coveredUntil.addingTimeInterval(1) <= horizon } }
        // In place, by index: a copy of each ledger would copy its records.
        var index = accessLedgers.values.startIndex
        while index != accessLedgers.values.endIndex {
            let count = accessLedgers.values[index].recent.count
            accessLedgers.values[index].recent.removeAll(where: spent)
            accessLedgers.values[index].cutoffs.removeAll { $0.coveredUntil.addingTimeInterval(1) <= horizon }
            removed += count - accessLedgers.values[index].recent.count
            accessLedgers.values.formIndex(after: &index)
        }
        accessLedgers.removeEntries { $0.value.recent.isEmpty && $0.value.latestExpiry.addingTimeInterval(1) <= horizon }
        return removed
    }

    /// The record of an access token with these claims, or the one its
    /// ledger derives; nil when no ledger of it is kept (reset, pruned, or not ours).
    func access(key: TokenID, claims: AccessTokenClaims) -> AccessRecord? {
        if let record = accessExceptions[key] { return record }
        let family = claims.sid.isEmpty ? nil : claims.sid
        guard let ledger = accessLedgers[AccessLedger.key(family: family, clientID: claims.clientID, subject: claims.sub.value)] else { return nil }
        // Most requests carry the newest token.
        if let index = ledger.recent.lastIndex(where: { $0.key == key }) { return ledger.recent[index] }
        var record = ledger.record(
            key: key, issuedAtSecond: claims.iat.value, expSecond: claims.exp.value, scope: claims.scope, subject: claims.sub.value)
        if let overrides = accessOverrides[key] { ledger.apply(overrides, to: &record) }
        return record
    }

    /// Every access record kept (the ledgers' recent tokens and the exceptions).
    var accessRecords: [AccessRecord] {
        accessLedgers.values.flatMap(\.recent) + accessExceptions.values
    }

    /// Applies `change` to the kept records `selector` names and, for a
    /// selector of whole logins, to their tokens no record is kept of
    /// (`cutoff`, up to the latest token issued or `upTo`); returns how many records changed.
    mutating func changeAccess(
        _ selector: TokenSelector, cutoff: AccessCutoff, upTo: UInt64? = nil, now: Date, _ change: (inout AccessRecord) -> Bool
    ) -> Int {
        let selected = selector.jti.map(TokenID.init)
        var changed = 0
        var found = false
        for key in Array(accessLedgers.keys) {
            guard var ledger = accessLedgers[key] else { continue }
            let owner = ledger.owner
            guard (selector.subject == nil || selector.subject == owner.subject) && (selector.family == nil || selector.family == owner.familyID)
            else { continue }
            if let selected {
                guard let index = ledger.recent.firstIndex(where: { $0.key == selected }) else { continue }
                found = true
                if change(&ledger.recent[index]) { changed += 1 }
            } else {
                for index in ledger.recent.indices where change(&ledger.recent[index]) { changed += 1 }
                var reach = cutoff
                reach.upTo = upTo ?? lastAccessSequence
                reach.coveredUntil = ledger.latestExpiry
                ledger.cutoffs.append(reach)
            }
            accessLedgers[key] = ledger
        }
        for (key, record) in accessExceptions where selector.matches(subject: record.subject, family: record.familyID, id: key, selected: selected) {
            found = true
            if change(&accessExceptions[key]!) { changed += 1 }
        }
        if let selected, !found, let sequence = selected.accessSequence, sequence <= lastAccessSequence {
            // One of this store's tokens no record is kept of any more (older
            // than its login's latest): its own override, counted as changed.
            var reach = cutoff
            reach.upTo = .max
            reach.coveredUntil = now.addingTimeInterval(longestAccessLifetime)
            accessOverrides[selected, default: []].append(reach)
            changed += 1
        }
        return changed
    }
}
