import Foundation

// Byte-level spellings on the request path. Foundation's string rewriting
// (`replacingOccurrences`, `removingPercentEncoding`, `String(format:)`)
// goes through NSString on Linux and was the largest cost of a refresh
// grant in the dialect (bench/README.md); these work on UTF-8 bytes.

extension Sequence<UInt8> {
    /// Lowercase hex, two digits per byte.
    package var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Data {
    /// RFC 4648 section 5 (base64url), without padding.
    package func base64URLEncodedString() -> String {
        let standard = base64EncodedString()
        var out: [UInt8] = []
        out.reserveCapacity(standard.utf8.count)
        for byte in standard.utf8 {
            switch byte {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): out.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64url with or without padding; nil when it is not base64url.
    package init?(base64URLEncoded text: some StringProtocol) {
        var standard: [UInt8] = []
        standard.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            case UInt8(ascii: "+"), UInt8(ascii: "/"): return nil
            default: standard.append(byte)
            }
        }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        self.init(base64Encoded: Data(standard))
    }
}

extension StringProtocol {
    /// `application/x-www-form-urlencoded` value decoding (WHATWG URL,
    /// section 5.1): `+` is a space and `%XX` a byte; nil when a `%` is not
    /// followed by two hex digits or the bytes are not UTF-8 (as
    /// `removingPercentEncoding` answers).
    package var formDecoded: String? { percentDecoded(plusIsSpace: true) }

    /// Percent-decoding only (`+` stays `+`).
    package var percentDecoded: String? { percentDecoded(plusIsSpace: false) }

    private func percentDecoded(plusIsSpace: Bool) -> String? {
        let bytes = utf8
        guard bytes.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) else { return String(self) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            switch byte {
            case UInt8(ascii: "+") where plusIsSpace:
                out.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index != bytes.endIndex, let high = bytes[index].hexDigitValue() else { return nil }
                bytes.formIndex(after: &index)
                guard index != bytes.endIndex, let low = bytes[index].hexDigitValue() else { return nil }
                bytes.formIndex(after: &index)
                out.append(high << 4 | low)
            default:
                out.append(byte)
            }
        }
        return String(validating: out, as: UTF8.self)
    }
}

extension UInt8 {
    /// The value of this byte as a hex digit, or nil. `lowercaseOnly`
    /// refuses A-F, for text that must spell back exactly.
    @inlinable package func hexDigitValue(lowercaseOnly: Bool = false) -> UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F") where !lowercaseOnly: self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
