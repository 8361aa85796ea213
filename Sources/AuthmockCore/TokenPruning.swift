import Crypto
import Foundation

/// Pruning: a server left running for days keeps only the token state that
/// can still change an answer. The rules (docs/configuration.md, "Pruning"),
/// with R the retention (`prune_after`, seconds of the server clock):
///
/// - an access token has no record of its own (`AccessLedger`); the
///   records a login's ledger lists go R after the `exp` of their JWT, and
///   the ledger itself once R has passed since the last `exp` of its tokens;
///   a token presented later is still `expired` (its family's revocation
///   is still seen through the `sid` claim while the family is kept);
/// - a rotated refresh token record goes R after its grace window ended,
///   or at once when its login has `TokenRules.rotatedKept` newer rotated
///   ones (so memory follows logins, not refreshes); presented later
///   (unexpired), the server still knows it by its sealed family (below)
///   and answers reuse and revokes the login, as before (or exchanges it,
///   where rotated tokens stay valid);
/// - any refresh token record goes R after it expired; presented later it
///   is `expired` (a rotated one too: no reuse revocation for a dead token);
/// - a login (family) goes once none of its refresh records and no ledger
///   of its access tokens is left; a token of it presented later is `expired`;
/// - authorization codes go R after they expire (later: `unknown`);
/// - verified-signature cache entries go with their access token.
///
/// Refresh tokens are sealed so that a pruned one is still recognised: the
/// value carries its family and expiry under an HMAC of the server key
/// (`RefreshTokenSeal`), so nothing about a pruned token needs keeping.
public struct PrunedCounts: Sendable, Codable, Equatable {
    public var access = 0
    public var refresh = 0
    public var families = 0
    public var codes = 0
    public var passes = 0

    public init(access: Int = 0, refresh: Int = 0, families: Int = 0, codes: Int = 0, passes: Int = 0) {
        (self.access, self.refresh, self.families, self.codes, self.passes) = (access, refresh, families, codes, passes)
    }
}

extension TokenState {
    /// Removes what can no longer change an answer at `now` (see the rules above).
    mutating func prune(now: Date, retention: Double, grace: Double) -> PrunedCounts {
        var removed = PrunedCounts(passes: 1)
        let horizon = now.addingTimeInterval(-retention)
        removed.access = pruneAccess(horizon: horizon)

        var spent: [TokenID] = []
        var kept = Set<String>()
        for (id, record) in refreshByID {
            if case .rotated(let at) = record.state, at.addingTimeInterval(grace) <= horizon {
                spent.append(id)
            } else if record.expiresAt <= horizon {
                spent.append(id)
            } else {
                kept.insert(record.familyID)
            }
        }
        for id in spent {
            if let record = refreshByID.removeValue(forKey: id) { refreshIDByValue[record.value] = nil }
        }
        removed.refresh = spent.count
        // A login with no refresh record and no access token left can change no answer any more.
        removed.families = families.removeEntries { !kept.contains($0.key) && accessLedgers[$0.key] == nil && $0.value.createdAt <= horizon }
        rotatedByFamily.removeEntries { families[$0.key] == nil }

        removed.codes = codes.removeEntries { $0.value.expiresAt <= horizon }
        pruned.access += removed.access
        pruned.refresh += removed.refresh
        pruned.families += removed.families
        pruned.codes += removed.codes
        pruned.passes += 1
        return removed
    }
}

extension Dictionary {
    /// Removes the entries `shouldRemove` picks, in place (keys first, then
    /// removal): a filtered copy of every table on every pruning pass was the
    /// soak's largest churn of memory. Returns how many went.
    @discardableResult
    mutating func removeEntries(where shouldRemove: (Element) -> Bool) -> Int {
        let keys = compactMap { shouldRemove($0) ? $0.key : nil }
        for key in keys { self[key] = nil }
        return keys.count
    }
}
