import AuthmockCore
import Foundation

// The journal keeps up to `journal_max_bytes` of entries for as long as a
// server runs. Token ids and body hashes were its only heap strings (four
// per refresh grant), and held for seconds between token records of other
// lifetimes they fragmented the heap: a 32 MiB journal cost 55-90 MB of RSS
// in the soak (bench/README.md). Token ids are `TokenID`s (AuthmockCore);
// body hashes are kept inline here; on the wire both are the same strings
// as before.

/// A request body's SHA-256: the 32 bytes inline, spelled as lowercase hex.
/// Anything else (a hand-made entry in a test or a decoded report) is kept
/// as text.
package struct BodyDigest: Sendable, Hashable, Codable {
    private enum Storage: Sendable, Hashable {
        case sha256(UInt64, UInt64, UInt64, UInt64)
        case text(String)
    }
    private var storage: Storage

    package init(sha256 bytes: some Sequence<UInt8>) {
        let bytes = Array(bytes)
        precondition(bytes.count == 32, "a SHA-256 is 32 bytes")
        func word(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        storage = .sha256(word(0), word(8), word(16), word(24))
    }

    private init(storage: Storage) { self.storage = storage }

    package init(_ text: String) {
        let nibbles = text.utf8.compactMap { $0.hexDigitValue(lowercaseOnly: true) }
        if text.utf8.count == 64, nibbles.count == 64 {
            self.init(sha256: stride(from: 0, to: 64, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] })
        } else {
            self.init(storage: .text(text))
        }
    }

    package var text: String {
        switch storage {
        case .sha256(let a, let b, let c, let d):
            [a, b, c, d].flatMap { word in (0..<8).reversed().map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }.hexString
        case .text(let text): text
        }
    }

    package var heapBytes: Int {
        if case .text(let text) = storage { return text.heapBytes }
        return 0
    }
}

// On the wire its text.
extension BodyDigest {
    package init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
