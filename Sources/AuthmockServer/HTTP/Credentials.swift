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

    /// On the hot path of every request: UTF-8 bytes, not Characters (a
    /// JWT is hundreds of them, and grapheme breaking showed in the profile).
    init(header raw: String) {
        let header = raw[...].utf8.trimmedSpaces
        guard !header.isEmpty else {
            self = .none
            return
        }
        let space = header.firstIndex(of: UInt8(ascii: " "))
        let schemeBytes = header[..<(space ?? header.endIndex)]
        let value = space.map { String(Substring(header[header.index(after: $0)...].trimmedSpaces)) } ?? ""
        switch schemeBytes.count {
        case 6 where schemeBytes.equalsIgnoringASCIICase("bearer"):
            self = .bearer(value)
        case 5 where schemeBytes.equalsIgnoringASCIICase("basic"):
            guard let data = Data(base64Encoded: value), let text = String(validating: data, as: UTF8.self),
                let colon = text.utf8.firstIndex(of: UInt8(ascii: ":"))
            else {
                self = .other(scheme: "Basic")
                return
            }
            // RFC 6749 section 2.3.1: client id and secret are form-encoded inside Basic.
            let user = text[..<colon], password = text[text.utf8.index(after: colon)...]
            self = .basic(user: user.formDecoded ?? String(user), password: password.formDecoded ?? String(password))
        default:
            // A bare token is one word with no scheme.
            self = space != nil ? .other(scheme: String(Substring(schemeBytes))) : .bare(String(Substring(schemeBytes)))
        }
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

    /// Whether the bytes spell `lowercase` in any ASCII case (scheme names;
    /// on every request, so nothing is allocated).
    func equalsIgnoringASCIICase(_ lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return elementsEqual(expected) { byte, letter in ((0x41...0x5A).contains(byte) ? byte | 0x20 : byte) == letter }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmedSpaces: Substring { Substring(utf8.trimmedSpaces) }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmedSpaces: Substring { self[...].trimmedSpaces }
}
