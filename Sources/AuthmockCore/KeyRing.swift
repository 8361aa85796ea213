import Crypto
import CryptoExtras
public import Foundation
public import JWTKit
import Synchronization

/// How tokens are signed (`--signing-alg`). HS256 is the design's default:
/// one shared secret, nothing published. RS256 and ES256 sign with a key
/// pair whose public half the JWKS publishes, as OpenID Connect providers do.
public enum SigningAlgorithm: String, Sendable, CaseIterable, Codable {
    case hs256 = "HS256"
    case rs256 = "RS256"
    case es256 = "ES256"

    public var isAsymmetric: Bool { self != .hs256 }
}

/// The keys tokens are signed and verified with: the current key, and keys a
/// rotation retired, which still verify (and stay in the JWKS) until their
/// grace ends on the server clock; then they are dropped, and tokens they
/// signed fail as `wrong-signature`. HS256 has one key and does not rotate:
/// its secret is shared with whoever verifies tokens, not published.
public final class KeyRing: Sendable {
    public let algorithm: SigningAlgorithm

    struct Key: Sendable {
        let id: String
        let signer: Signer
        /// The JWK of the public half (RS256, ES256).
        let publicJWK: [String: String]?
        /// End of the grace of a retired key; nil for the current key.
        var retiredUntil: Date?
    }

    enum Signer: Sendable {
        case hmac(SymmetricKey)
        case rsa(JWTKit.Insecure.RSA.PrivateKey)
        case ecdsa(ES256PrivateKey)
    }

    private struct State {
        var keys: [Key]
        var collection: JWTKeyCollection
        /// Bumped by every change: a change built from an older list is built again.
        var generation = 0
    }
    private let state: Mutex<State>

    /// HS256 with `secret`, or a new key pair for RS256/ES256.
    public init(algorithm: SigningAlgorithm, secret: SigningKey) async throws {
        self.algorithm = algorithm
        let first =
            algorithm == .hs256
            ? Key(id: secret.id, signer: .hmac(secret.key), publicJWK: nil) : try Self.generate(algorithm)
        let collection = await Self.collection(of: [first])
        self.state = Mutex(State(keys: [first], collection: collection))
    }

    /// The `kid` new tokens carry.
    public var currentKeyID: String { state.withLock { $0.keys.first { $0.retiredUntil == nil }!.id } }

    /// Whether `kid` names a key that still verifies at `now`.
    public func verifies(kid: String?, at now: Date) -> Bool {
        state.withLock { state in state.keys.contains { $0.id == kid && ($0.retiredUntil.map { $0 > now } ?? true) } }
    }

    public func sign(_ payload: some JWTPayload, header: JWTHeader = JWTHeader()) async throws -> String {
        let (collection, kid) = state.withLock { ($0.collection, $0.keys.first { $0.retiredUntil == nil }!.id) }
        return try await collection.sign(payload, kid: JWKIdentifier(string: kid), header: header)
    }

    public func verify<Payload: JWTPayload>(_ token: String, as type: Payload.Type) async throws -> Payload {
        let collection = state.withLock { $0.collection }
        return try await collection.verify(token, as: type)
    }

    /// The JSON Web Key Set (RFC 7517) of the keys that verify at `now`:
    /// current first. Empty for HS256, whose secret is not published.
    public func jwks(at now: Date) -> [[String: String]] {
        state.withLock { state in
            state.keys.filter { $0.retiredUntil.map { $0 > now } ?? true }.compactMap(\.publicJWK)
        }
    }

    /// A summary for the control API: each key's id and, when retired, the end of its grace.
    public func listing() -> [(id: String, retiredUntil: Date?)] {
        state.withLock { $0.keys.map { ($0.id, $0.retiredUntil) } }
    }

    /// Makes a new current key; the old one verifies until `now + grace`.
    /// Nil for HS256 (nothing to rotate to that a verifier would know).
    public func rotate(at now: Date, grace: Double) async throws -> (new: String, retired: String)? {
        guard algorithm.isAsymmetric else { return nil }
        let fresh = try Self.generate(algorithm)
        var retired = ""
        await change { keys in
            retired = keys.first { $0.retiredUntil == nil }!.id
            for index in keys.indices where keys[index].retiredUntil == nil { keys[index].retiredUntil = now.addingTimeInterval(grace) }
            keys.removeAll { $0.retiredUntil.map { $0 <= now } ?? false }
            keys.insert(fresh, at: 0)
        }
        return (fresh.id, retired)
    }

    /// Drops keys whose grace ended by `now`; true when one was dropped
    /// (cached verifications of its tokens must go too).
    public func dropExpired(at now: Date) async -> Bool {
        // Asked before every verification: no allocation unless a key is due.
        guard state.withLock({ $0.keys.contains { $0.retiredUntil.map { $0 <= now } ?? false } }) else { return false }
        var dropped = false
        await change { keys in
            let count = keys.count
            keys.removeAll { $0.retiredUntil.map { $0 <= now } ?? false }
            dropped = keys.count < count
        }
        return dropped
    }

    /// Applies `edit` to the key list and installs the keys it leaves. The
    /// collection is built outside the lock (jwt-kit's is an actor); a
    /// rotation and a drop racing each other never undo one another: an
    /// edit of a list that changed meanwhile is made again on the new one.
    private func change(_ edit: (inout [Key]) -> Void) async {
        while true {
            var (keys, generation) = state.withLock { ($0.keys, $0.generation) }
            edit(&keys)
            let collection = await Self.collection(of: keys)
            let installed = state.withLock { state in
                guard state.generation == generation else { return false }
                state = State(keys: keys, collection: collection, generation: generation + 1)
                return true
            }
            if installed { return }
        }
    }

    private static func collection(of keys: [Key]) async -> JWTKeyCollection {
        let collection = JWTKeyCollection()
        for key in keys {
            let kid = JWKIdentifier(string: key.id)
            switch key.signer {
            case .hmac(let secret): await collection.add(hmac: HMACKey(key: secret), digestAlgorithm: .sha256, kid: kid)
            case .rsa(let rsa): await collection.add(rsa: rsa, digestAlgorithm: .sha256, kid: kid)
            case .ecdsa(let ecdsa): await collection.add(ecdsa: ecdsa, kid: kid)
            }
        }
        return collection
    }

    /// A new key pair; its `kid` is the RFC 7638 thumbprint's first 16 hex digits.
    private static func generate(_ algorithm: SigningAlgorithm) throws -> Key {
        var jwk: [String: String]
        let signer: Signer
        switch algorithm {
        case .hs256: preconditionFailure("HS256 keys come from the configured secret")
        case .rs256:
            let key = try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
            let (modulus, exponent) = try key.publicKey.getKeyPrimitives()
            jwk = ["kty": "RSA", "n": modulus.base64URLEncodedString(), "e": exponent.base64URLEncodedString()]
            signer = .rsa(key)
        case .es256:
            let key = ES256PrivateKey()
            guard let (x, y) = key.parameters else { throw SettingsError("the new P-256 key has no public coordinates") }
            jwk = ["kty": "EC", "crv": "P-256", "x": x, "y": y]
            signer = .ecdsa(key)
        }
        // RFC 7638: the required members, in lexicographic order, no spaces.
        let members = jwk.keys.sorted().map { "\"\($0)\":\"\(jwk[$0]!)\"" }.joined(separator: ",")
        let id = SHA256.hash(data: Data(("{" + members + "}").utf8)).prefix(8).hexString
        jwk["kid"] = id
        jwk["alg"] = algorithm.rawValue
        jwk["use"] = "sig"
        return Key(id: id, signer: signer, publicJWK: jwk)
    }
}
