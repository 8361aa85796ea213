public import AuthmockModel
import DriverProtocol
import Foundation
public import HTTPTypes
public import NIOCore

/// What `authmock proxy` reads from the real backend's answer to a request
/// it forwarded: the tokens a sign-in or refresh handed out, read where the
/// dialect says they are, and which documented error it is.
public struct UpstreamAnswer: Sendable, Equatable {
    public var accessToken: String?
    public var refreshToken: String?
    /// The lifetime the answer announces (`expires_in`), in seconds.
    public var expiresIn: Double?
    /// The dialect's error answer (`errors.answers` key) this answer is, where its code tells.
    public var situation: String?
    /// The code the body names (oauth2's `error`, a dialect's code).
    public var errorCode: String?

    public init(accessToken: String? = nil, refreshToken: String? = nil, expiresIn: Double? = nil, situation: String? = nil, errorCode: String? = nil)
    {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.situation = situation
        self.errorCode = errorCode
    }
}

extension Dialect {
    /// Reads an upstream answer in this dialect: a file's answers by its
    /// templates, oauth2's by RFC 6749's member names (section 5.1, 5.2).
    /// `kind`: what was asked, which tells apart error answers that share a
    /// status and code (a refresh's `refresh_token_*`, an API call's `access_*`).
    public func readUpstream(status: Int, headers: HTTPFields, body: ByteBuffer, kind: RouteKind) -> UpstreamAnswer {
        let json = body.readableBytes == 0 ? nil : try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView))
        guard let declared = self as? DeclaredDialect else {
            guard case .object(let members)? = json else { return UpstreamAnswer() }
            let text = { (name: String) -> String? in if case .string(let value)? = members[name] { value } else { nil } }
            return UpstreamAnswer(
                accessToken: text("access_token"), refreshToken: text("refresh_token"), expiresIn: members["expires_in"]?.numeric,
                errorCode: (200..<300).contains(status) ? nil : text("error"))
        }
        let dialect = declared.description
        let header = { (name: String) in HTTPField.Name(name).flatMap { headers[$0] } }
        let keys = dialect.errorKeys(status: status, body: json)
        let situation = keys.first { Self.answers(kind, $0) } ?? keys.first
        var answer = UpstreamAnswer(situation: situation)
        if let situation, let code = dialect.errors.answers[situation]?.code {
            answer.errorCode =
                switch code {
                case .string(let text): text
                case .integer(let number): String(number)
                default: nil
                }
        }
        // An error answer (a 2xx with the dialect's error code too) hands out nothing.
        guard (200..<300).contains(status), situation == nil else { return answer }
        answer.accessToken = dialect.answerText(.accessToken, body: json, header: header)
        answer.refreshToken = dialect.answerText(.refreshToken, body: json, header: header)
        answer.expiresIn = dialect.answerSeconds(.expiresIn, body: json, header: header)
        // A dialect that refreshes on resources renews the access token in an API answer's header.
        if kind == .refresh, answer.accessToken == nil { answer.accessToken = declared.renewedAccessToken(headers) }
        return answer
    }

    /// Whether an error answer's key belongs to a request of this kind.
    private static func answers(_ kind: RouteKind, _ key: String) -> Bool {
        switch kind {
        case .refresh: key.hasPrefix("refresh_token_") && key != "refresh_token_as_access_token" || key == "access_token_missing_on_refresh"
        case .resource: key.hasPrefix("access_") || key == "refresh_token_as_access_token" || key == "insufficient_scope"
        case .login: key == "wrong_credentials" || key == "user_unknown" || key == "client_unknown"
        default: false
        }
    }
}
