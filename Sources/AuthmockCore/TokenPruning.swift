import Crypto
import Foundation

/// Pruning: a server left running for days keeps only the token state that
/// can still change an answer. The rules (docs/configuration.md, "Pruning"),
/// with R the retention (`prune_after`, seconds of the server clock):
///
/// - an access token record goes R after the `exp` of its JWT; presented
///   later it is still `expired` (its family's revocation is still seen
///   through the `sid` claim while the family is kept);
/// - a rotated refresh token record goes R after its grace window ended;
///   presented later (unexpired), the server still knows it by its sealed
///   family (below) and answers reuse and revokes the login, as before;
/// - any refresh token record goes R after it expired; presented later it
///   is `expired` (a rotated one too: no reuse revocation for a dead token);
/// - a login (family) goes once none of its refresh records is left; a
///   token of it presented later is `expired`;
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
}

/// Refresh token values: 45 bytes, base64url (60 characters, one part):
/// version, expiry (seconds since 1970), family id, 16 random bytes, and the
/// first 12 bytes of an HMAC-SHA256 over them with a key derived from the
/// signing key. Opaque to clients; to the server, proof of which login a
/// token belonged to after its record is gone.
public struct RefreshTokenSeal: Sendable {
    private let key: SymmetricKey
    private static let version: UInt8 = 1

    init(signingKey: SigningKey) {
        // A key of its own: a refresh token's MAC can never pass for a JWT signature.
        let derived = HMAC<SHA256>.authenticationCode(for: Data("authmock refresh token seal v1".utf8), using: signingKey.key)
        key = SymmetricKey(data: Data(derived))
    }

    func make(family: String, expiresAt: Date) -> String {
        var bytes: [UInt8] = [Self.version]
        bytes += withUnsafeBytes(of: Int64(expiresAt.timeIntervalSince1970.rounded(.up)).bigEndian, Array.init)
        bytes += withUnsafeBytes(of: (UInt64(family.dropFirst(4), radix: 16) ?? 0).bigEndian, Array.init)
        var generator = SystemRandomNumberGenerator()
        bytes += (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes += Array(HMAC<SHA256>.authenticationCode(for: bytes, using: key)).prefix(12)
        return Data(bytes).base64URLEncodedString()
    }

    /// The family and expiry sealed in `value`, when this server sealed it.
    func open(_ value: String) -> (family: String, expiresAt: Date)? {
        guard value.utf8.count == 60, let data = Data(base64URLEncoded: value), data.count == 45, data.first == Self.version else { return nil }
        let bytes = Array(data)
        let mac = HMAC<SHA256>.authenticationCode(for: bytes[0..<33], using: key)
        // Every byte compared, whatever differs first.
        guard zip(Array(mac).prefix(12), bytes[33..<45]).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0 else { return nil }
        let expiry = bytes[1..<9].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let family = bytes[9..<17].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return ("fam_" + String(family, radix: 16), Date(timeIntervalSince1970: Double(expiry)))
    }
}

extension TokenState {
    /// Removes what can no longer change an answer at `now` (see the rules above).
    mutating func prune(now: Date, retention: Double, grace: Double) -> PrunedCounts {
        var removed = PrunedCounts(passes: 1)
        let horizon = now.addingTimeInterval(-retention)
        // The JWT's exp (issue time plus lifetime) decides, not an earlier forced expiry.
        removed.access = accessByID.removeEntries { $0.value.issuedAt.addingTimeInterval($0.value.lifetime + 1) <= horizon }

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
        // A login with no refresh record left can change no answer any more.
        removed.families = families.removeEntries { !kept.contains($0.key) && $0.value.createdAt <= horizon }

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
