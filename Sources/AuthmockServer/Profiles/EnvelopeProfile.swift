import DriverProtocol
public import AuthmockCore
import Foundation
public import HTTPTypes
public import Hummingbird
public import NIOCore

/// Every answer is `{"success", "data", "error": {"code", "message"}}` with
/// numeric codes (HTTP status = code / 100), as in many Spring backends. A
/// client must refresh on 40101 only: 40102/40103 mean sign in again.
public struct EnvelopeProfile: Profile {
    public let name = ProfileName.envelope.rawValue
    public let summary = "JSON envelope {success, data, error:{code, message}} with numeric codes; refresh at POST /auth/refresh"

    public func addRoutes(to routes: ClientRoutes, mock: Authmock) {
        routes.issuing(.post, "/auth/login") { _, context in
            switch try await BackendDialect.login(context: context, mock: mock) {
            case .issued(let issued): return .issued(issued, success(Tokens(issued)))
            case .body(let problem): return .plain(bodyProblem(problem, context: context))
            case .wrongCredentials: return .plain(fail(EnvelopeError.wrongCredentials, context: context))
            }
        }
        routes.issuing(.post, "/auth/refresh") { _, context in
            let token: String
            switch BackendDialect.fields(context, ["refreshToken"]).map({ $0["refreshToken"] }) {
            case .failure(let problem): return .plain(bodyProblem(problem, context: context))
            case .success(nil): return .plain(bodyProblem(.missing("refreshToken"), context: context))
            case .success(let value?): token = value
            }
            if await mock.authority.signedClaims(token) != nil {
                return .plain(fail(EnvelopeError.accessAsRefresh, detail: "refreshToken holds an access token", context: context))
            }
            let error: EnvelopeError
            switch try await mock.authority.refresh(token, clientID: nil) {
            case .success(let issued): return .issued(issued, success(Tokens(issued, keeping: token)))
            case .failure(.expired): error = .refreshExpired
            case .failure(.unknown): error = .refreshUnknown
            case .failure(.reused): error = .refreshReused
            case .failure(.revoked), .failure(.clientMismatch): error = .refreshRevoked
            }
            return .plain(fail(error, context: context))
        }
        // These backends answer a wrong method with their own code, not a 404.
        for path in ["/auth/login", "/auth/refresh"] {
            for method in [HTTPRequest.Method.get, .put, .patch, .delete] {
                routes.on(path, method: method) { request, context in
                    fail(EnvelopeError.methodNotAllowed, detail: "\(request.method) \(path)", context: context)
                }
            }
        }
    }

    struct Tokens: Encodable {
        var accessToken: String, refreshToken: String, accessTokenExpiresIn: Int
        init(_ issued: IssuedTokens, keeping old: String = "") {
            accessToken = issued.accessToken
            refreshToken = issued.refreshToken ?? old
            accessTokenExpiresIn = issued.expiresIn
        }
    }

    /// `{"success": ..., "data": ..., "error": ...}` with explicit nulls, as such backends send them.
    struct Envelope<Data: Encodable>: Encodable {
        var data: Data?
        var error: EnvelopeFailure?
        enum CodingKeys: String, CodingKey { case success, data, error }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(error == nil, forKey: .success)
            if let data { try c.encode(data, forKey: .data) } else { try c.encodeNil(forKey: .data) }
            if let error { try c.encode(error, forKey: .error) } else { try c.encodeNil(forKey: .error) }
        }
    }

    struct EnvelopeFailure: Encodable {
        var code: Int, message: String
    }

    public func successBody<Body: Encodable>(_ body: Body) -> ByteBuffer {
        JSONResponse.bytes(Envelope(data: body, error: nil))
    }

    public func errorResponse(_ row: ErrorRow, detail: String?, headers: HTTPFields) -> Response {
        var message = row.message
        if let detail { message += ": \(detail)" }
        let envelope = Envelope<Int>(data: nil, error: EnvelopeFailure(code: Int(row.code) ?? 50000, message: message))
        return JSONResponse.encode(envelope, status: .init(code: row.status), headers: headers)
    }

    public func row(for common: CommonError) -> ErrorRow {
        switch common {
        case .notFound: EnvelopeError.notFound.row
        case .malformedFraming: EnvelopeError.malformedFraming.row
        case .payloadTooLarge: EnvelopeError.payloadTooLarge.row
        case .storeUnavailable: EnvelopeError.storeUnavailable.row
        case .internalError: EnvelopeError.internalError.row
        }
    }

    public func classify(method: HTTPRequest.Method, path: String, headers: HTTPFields, body: ByteBuffer) -> RouteClassification {
        BackendDialect.classify(path: path, body: body, refreshPath: "/auth/refresh")
    }

    public func resourceRefusal(_ refusal: ResourceRefusal, context: AuthmockRequestContext) -> Response {
        let error: EnvelopeError =
            switch refusal {
            case .noBearer, .token(.missing): .missingToken
            case .token(.expired): .accessExpired
            case .token(.revoked): .accessRevoked
            case .token(.malformed): .malformedToken
            case .token(.wrongAlgorithm): .unsupportedToken
            case .token(.badSignature), .token(.wrongAudience), .token(.wrongIssuer), .token(.notYetValid), .refresh: .accessInvalid
            case .refreshTokenAsAccessToken: .refreshAsAccess
            case .insufficientScope: .accessDenied
            }
        return fail(error, context: context)
    }

    private func bodyProblem(_ problem: JSONFields.Problem, context: AuthmockRequestContext) -> Response {
        switch problem {
        case .malformed: fail(EnvelopeError.malformedJSON, context: context)
        case .notAnObject: fail(EnvelopeError.invalidParameter, detail: "the body must be a JSON object", context: context)
        case .missing(let name): fail(EnvelopeError.missingParameter, detail: name, context: context)
        case .wrongType(let name): fail(EnvelopeError.invalidParameter, detail: "\(name) must be a string", context: context)
        }
    }

    public func startupHints(baseURL: String, directory: Directory) -> [String] {
        BackendDialect.loginHints(baseURL: baseURL, directory: directory) + [
            "Refresh (refresh only on error code 40101):",
            "  curl -s -H 'Content-Type: application/json' -d \"{\\\"refreshToken\\\":\\\"$REFRESH_TOKEN\\\"}\" \(baseURL)/auth/refresh",
        ]
    }
}
