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
        // On the hot path of every resource request: plain Substring work,
        // no Foundation trimming (which goes through UTF-16 on Linux).
        guard let raw = fields[.authorization] else {
            self = .none
            return
        }
        let header = raw.trimmedSpaces
        guard !header.isEmpty else {
            self = .none
            return
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        let scheme = parts[0].lowercased()
        let value = parts.count > 1 ? String(parts[1].trimmedSpaces) : ""
        switch scheme {
        case "bearer":
            self = .bearer(value)
        case "basic":
            guard let data = Data(base64Encoded: value), let text = String(data: data, encoding: .utf8),
                let colon = text.firstIndex(of: ":")
            else {
                self = .other(scheme: "Basic")
                return
            }
            // RFC 6749 section 2.3.1: client id and secret are form-encoded inside Basic.
            let user = String(text[..<colon]), password = String(text[text.index(after: colon)...])
            self = .basic(
                user: user.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? user,
                password: password.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? password)
        default:
            // A bare token is one word with no scheme.
            self = parts.count > 1 ? .other(scheme: String(parts[0])) : .bare(String(parts[0]))
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

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmedSpaces: Substring {
        let text = self[...]
        guard let first = text.firstIndex(where: { $0 != " " && $0 != "\t" }),
            let last = text.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        return Substring(text[first...last])
    }
}
