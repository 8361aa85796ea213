import AuthmockCore
import AuthmockModel
import DriverProtocol
public import HTTPTypes
public import Hummingbird
public import NIOCore

/// What `authmock proxy` decides in the dialect's terms, around the
/// forwarding itself (AuthmockProxy's `UpstreamForwarder`, which moves the
/// bytes): when it answers for the backend, and what it learns from the
/// backend's answers.
extension Authmock {
    /// The proxy's own answer to a request it does not forward, in the
    /// dialect's words: an API call with a token expired at the proxy (its
    /// own end, `--expire-after`, the clock moved past it, `tokens/expire`)
    /// or revoked there, a refresh with a refresh token revoked there. nil:
    /// forward it.
    public func proxyAnswer(context: AuthmockRequestContext) -> Response? {
        guard learned != nil else { return nil }
        // As judged on arrival (`LearnedTokens.judge`).
        let presented = context.learned
        let route = context.route
        if route.kind == .resource, let access = presented.access {
            switch access.state {
            case "expired": return dialect.fail(.accessToken(.expired), context: context)
            case "revoked": return dialect.fail(.accessToken(.revoked), context: context)
            default: break
            }
        }
        if route.kind == .refresh, let refresh = presented.refresh {
            switch refresh.state {
            case "revoked": return dialect.fail(.refreshToken(.revoked), context: context)
            case "expired": return dialect.fail(.refreshToken(.expired), context: context)
            default: break
            }
        }
        return nil
    }

    /// Whether the proxy asks the backend for an answer it can read
    /// (`Accept-Encoding` dropped): one that hands out tokens, and an API
    /// answer of a dialect that may say an error in a 2xx's body. A
    /// compressed one would hide its tokens and codes.
    public func proxyWantsPlainAnswer(context: AuthmockRequestContext) -> Bool {
        switch context.route.kind {
        case .login, .refresh, .revoke: true
        case .resource: errorsIn2xx
        default: false
        }
    }

    /// The dialect answers some errors with a 2xx status and a code.
    private var errorsIn2xx: Bool { (dialect as? DeclaredDialect)?.answersErrorsIn2xx == true }

    /// Whether the proxy reads the backend's whole answer before passing it
    /// on: sign-in, refresh and sign-out answers (tokens and codes are in
    /// them), and an error answer of a length it can hold (the dialect's
    /// code names it in the journal). Anything else streams through.
    public func proxyReadsAnswer(status: Int, headers: HTTPFields, context: AuthmockRequestContext) -> Bool {
        switch context.route.kind {
        case .login, .refresh, .revoke: return true
        default:
            guard let length = headers[.contentLength].flatMap(Int.init), length <= options.maxBodyBytes else { return false }
            return !(200..<300).contains(status) || errorsIn2xx
        }
    }

    /// Learns from the backend's answer to a forwarded request (read whole,
    /// `proxyReadsAnswer`): the tokens a sign-in or refresh handed out, and
    /// the dialect's error it is, for the journal.
    public func learnFromUpstream(status: Int, headers: HTTPFields, body: ByteBuffer, context: AuthmockRequestContext) {
        guard let learned else { return }
        let answer = dialect.readUpstream(status: status, headers: headers, body: body, kind: context.route.kind)
        if let situation = answer.situation { context.notes.situation = situation }
        if let code = answer.errorCode { context.notes.errorCode = code }
        let route = context.route
        guard route.kind == .login || route.kind == .refresh else { return }
        let presented = [route.refreshToken, context.credential?.token].compactMap { $0 }
        context.notes.learned = learned.learn(answer, presented: presented, at: clock.now())
    }
}

extension Authmock {
    /// The proxy's answer when the backend could not be reached or did not
    /// answer in time: 502 with `upstream_unreachable` and what went wrong
    /// (docs/proxy.md). The proxy's own shape, not the dialect's: no real
    /// backend said anything.
    public func upstreamFailure(_ detail: String, context: AuthmockRequestContext) -> Response {
        context.notes.errorCode = Self.upstreamUnreachable
        return JSONResponse.encode(["error": Self.upstreamUnreachable, "message": detail], status: .badGateway)
    }

    public static let upstreamUnreachable = "upstream_unreachable"
}
