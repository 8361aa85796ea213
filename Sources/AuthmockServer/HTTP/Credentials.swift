import AuthmockCore
import Foundation
import HTTPTypes

/// What a request presented in its `Authorization` header.
enum PresentedCredential: Sendable, Equatable {
    case none
    case bearer(String)
    case basic(user: String, password: String)
    /// A token without a scheme (the classic missing-`Bearer ` bug).
    case bare(String)
    /// Any other scheme, or undecodable Basic.
    case other(scheme: String)

    init(_ fields: HTTPFields) {
        guard let raw = fields.value(of: .authorization) else {
            self = .none
            return
        }
        self.init(header: raw)
    }

    /// On the hot path of every request: index arithmetic on the header's
    /// UTF-8 bytes (a JWT is hundreds of them; grapheme breaking, and then
    /// generic walks over the UTF-8 view, showed in the dialect).
    init(header raw: String) {
        var raw = raw
        self = raw.withUTF8(Self.parse)
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> PresentedCredential {
        func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        guard start < end else { return .none }
        // The scheme ends at the first space; the value is the rest, trimmed.
        var space = start
        while space < end, bytes[space] != UInt8(ascii: " ") { space += 1 }
        let scheme = UnsafeBufferPointer(rebasing: bytes[start..<space])
        var valueStart = space
        while valueStart < end, isSpace(bytes[valueStart]) { valueStart += 1 }
        let value = text(valueStart..<end)
        if scheme.equalsIgnoringASCIICase("bearer") { return .bearer(value) }
        if scheme.equalsIgnoringASCIICase("basic") {
            guard let data = Data(base64Encoded: value), let text = String(validating: data, as: UTF8.self),
                let colon = text.utf8.firstIndex(of: UInt8(ascii: ":"))
            else {
                return .other(scheme: "Basic")
            }
            // RFC 6749 section 2.3.1: client id and secret are form-encoded inside Basic.
            let user = text[..<colon], password = text[text.utf8.index(after: colon)...]
            return .basic(user: user.formDecoded ?? String(user), password: password.formDecoded ?? String(password))
        }
        // A bare token is one word with no scheme.
        return space < end ? .other(scheme: text(start..<space)) : .bare(text(start..<space))
    }

    /// The scheme as written, for logs and the journal.
    var scheme: String {
        switch self {
        case .none: "none"
        case .bearer: "Bearer"
        case .basic: "Basic"
        case .bare: "(none: bare token)"
        case .other(let scheme): scheme
        }
    }

    /// The token presented with or without `Bearer `: the journal records
    /// which token the client held even when it forgot the scheme.
    var token: String? {
        switch self {
        case .bearer(let token), .bare(let token): token
        case .none, .basic, .other: nil
        }
    }
}

extension HTTPFields {
    /// The field's value as the name subscript gives it (several values
    /// joined), but a field sent once, as `Authorization` always is, is
    /// returned as it is: the subscript copies even one value through a
    /// generic join, on every request, and a JWT is hundreds of bytes.
    func value(of name: HTTPField.Name) -> String? {
        var found: String? = nil
        for field in self where field.name == name {
            guard found == nil else { return self[name] }
            found = field.value
        }
        return found
    }
}

extension Substring.UTF8View {
    /// Without leading and trailing spaces and tabs.
    var trimmedSpaces: Substring.UTF8View {
        guard let first = firstIndex(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }),
            let last = lastIndex(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") })
        else { return self[endIndex...] }
        return self[first...last]
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether the bytes spell `lowercase` in any ASCII case (scheme names;
    /// on every request, so nothing is allocated).
    func equalsIgnoringASCIICase(_ lowercase: StaticString) -> Bool {
        guard count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return elementsEqual(expected) { byte, letter in ((0x41...0x5A).contains(byte) ? byte | 0x20 : byte) == letter }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmedSpaces: Substring { Substring(utf8.trimmedSpaces) }

    /// What follows `scheme` and a space (the scheme in any ASCII case),
    /// trimmed; nil when the value does not start with it. Byte-wise: a
    /// header value read on every request is a JWT of hundreds of bytes.
    func afterScheme(_ scheme: String) -> Substring? {
        let bytes = utf8, length = scheme.utf8.count
        guard bytes.count > length, bytes[bytes.index(bytes.startIndex, offsetBy: length)] == UInt8(ascii: " "),
            bytes.prefix(length).elementsEqual(scheme.utf8, by: { ($0 | 0x20) == ($1 | 0x20) })
        else { return nil }
        return Substring(bytes.dropFirst(length + 1)).trimmedSpaces
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmedSpaces: Substring { self[...].trimmedSpaces }
}
