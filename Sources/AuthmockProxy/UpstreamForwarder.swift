public import AsyncHTTPClient
public import AuthmockServer
import Foundation
import HTTPTypes
public import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// `authmock proxy`'s forwarding: each request of the client's (observed
/// and journaled on arrival, faults fired, as `serve` does) goes to the
/// real backend, and its answer comes back. The decisions in the dialect's
/// terms (answering an expired token itself, learning tokens from answers)
/// are the server's (`Authmock.proxyAnswer`, `learnFromUpstream`); this
/// moves the bytes: headers kept but hop-by-hop ones, bodies of answers it
/// need not read streamed through, no redirect followed (the client sees
/// the backend's), compression left as the backend sent it.
public struct UpstreamForwarder: Sendable {
    let mock: Authmock
    let upstream: UpstreamOptions
    let client: HTTPClient
    /// Largest answer read whole (token endpoints, error answers): a bigger one is a 502.
    static let readLimit = 4 << 20

    /// `mock` must have been made with `options.upstream`.
    public init(mock: Authmock, client: HTTPClient) {
        precondition(mock.options.upstream != nil, "a forwarder needs the mock's upstream")
        self.mock = mock
        self.upstream = mock.options.upstream!
        self.client = client
    }

    /// An HTTP client as a proxy needs it: redirects passed to the client,
    /// bodies not decompressed, connecting bounded, the backend's own
    /// certificates trusted beside the system's.
    public static func makeClient(_ upstream: UpstreamOptions) -> HTTPClient {
        let timeoutSeconds = upstream.timeoutSeconds
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(min(timeoutSeconds, 10) * 1000)), read: .milliseconds(Int64(timeoutSeconds * 1000))),
            decompression: .disabled)
        configuration.connectionPool = .init(idleTimeout: .seconds(50))
        // A refused connection is said at once (a 502), not retried until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        // Ten calls held together (a `gather` fault) reach the backend together.
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        if let file = upstream.trustedCertificatesFile {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.file(file)]
            configuration.tlsConfiguration = tls
        }
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// This forwarder as the application serves it (`AuthmockApplication.make`).
    public var forwarding: Forwarder { { request, context in try await forward(request, context: context) } }

    /// The answer to one request of the client's.
    public func forward(_ request: Request, context: AuthmockRequestContext) async throws -> Response {
        if let own = mock.proxyAnswer(context: context) { return own }
        let target = upstream.target(path: request.uri.path, query: request.uri.query)
        var outbound = HTTPClientRequest(url: target)
        outbound.method = HTTPMethod(rawValue: request.method.rawValue)
        outbound.headers = Self.forwarded(request.headers)
        if let host = request.head.authority { outbound.headers.replaceOrAdd(name: "X-Forwarded-Host", value: host) }
        outbound.headers.replaceOrAdd(name: "X-Forwarded-Proto", value: mock.options.tls == nil ? "http" : "https")
        if mock.proxyWantsPlainAnswer(context: context) { outbound.headers.remove(name: "Accept-Encoding") }
        let length = request.headers[.contentLength].flatMap(Int.init)
        if let length, mock.options.streamsUpload(length: length) {
            // An upload over --max-body, unread so far: to the backend as it comes.
            outbound.body = .stream(request.body, length: .known(Int64(length)))
        } else {
            // The observation middleware has read the body already (bounded by --max-body), and kept it on the request.
            let body = try await request.body.collect(upTo: mock.options.maxBodyBytes)
            if body.readableBytes > 0 || length != nil { outbound.body = .bytes(body) }
        }

        let answer: HTTPClientResponse
        do {
            answer = try await client.execute(outbound, timeout: .milliseconds(Int64(upstream.timeoutSeconds * 1000)))
        } catch {
            let detail =
                "\(request.method) \(upstream.target(path: request.uri.path, query: nil)): \(Self.describe(error, timeout: upstream.timeoutSeconds))"
            context.logger.warning("upstream failed: \(detail)")
            return mock.upstreamFailure(detail, context: context)
        }
        let status = Int(answer.status.code)
        var headers = Self.returned(answer.headers)
        guard mock.proxyReadsAnswer(status: status, headers: headers, context: context) else {
            return Response(status: .init(code: status), headers: headers, body: ResponseBody(asyncSequence: answer.body))
        }
        let bytes: ByteBuffer
        do {
            bytes = try await answer.body.collect(upTo: Self.readLimit)
        } catch {
            let detail = "\(request.method) \(request.uri.path): the answer could not be read whole (\(error))"
            context.logger.warning("upstream failed: \(detail)")
            return mock.upstreamFailure(detail, context: context)
        }
        mock.learnFromUpstream(status: status, headers: headers, body: bytes, context: context)
        // Framed anew around the bytes read.
        headers[.contentLength] = nil
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: bytes))
    }

    /// Hop-by-hop headers (RFC 9110 section 7.6.1) belong to one connection,
    /// not the message: neither forwarded nor returned. The client's Host
    /// and length are set anew for the backend's connection.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding",
        "upgrade",
    ]

    /// The client's headers as the backend gets them.
    static func forwarded(_ fields: HTTPFields) -> HTTPHeaders {
        let dropped = connectionScoped(fields).union(["host", "content-length"])
        var headers = HTTPHeaders()
        for field in fields where !dropped.contains(field.name.canonicalName) { headers.add(name: field.name.rawName, value: field.value) }
        return headers
    }

    /// The backend's headers as the client gets them.
    static func returned(_ headers: HTTPHeaders) -> HTTPFields {
        var fields = HTTPFields()
        let named = Set(headers["connection"].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        for (name, value) in headers {
            let lowered = name.lowercased()
            guard !hopByHop.contains(lowered), !named.contains(lowered), let fieldName = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return fields
    }

    /// Hop-by-hop names, and those the Connection header lists.
    private static func connectionScoped(_ fields: HTTPFields) -> Set<String> {
        var names = hopByHop
        for value in fields[values: .connection] {
            for name in value.split(separator: ",") { names.insert(name.trimmingCharacters(in: .whitespaces).lowercased()) }
        }
        return names
    }

    /// What went wrong reaching the backend, in words a developer acts on.
    static func describe(_ error: any Error, timeout: Double) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "connecting timed out (is the backend running, and the address right?)"
            case .deadlineExceeded, .readTimeout: return "no answer within \(Int(timeout)) s"
            case .remoteConnectionClosed: return "the backend closed the connection without an answer"
            default: break
            }
        }
        let text = String(describing: error)
        if text.contains("connectionRefused") || text.contains("Connection refused") || text.contains("ECONNREFUSED") {
            return "connection refused (is the backend running on that port?)"
        }
        if text.lowercased().contains("dns") || text.contains("unknown host") || text.contains("NXDOMAIN") {
            return "the host name does not resolve (\(text))"
        }
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the backend's TLS certificate is not trusted (a self-signed one? trust it with --upstream-ca FILE)"
        }
        if text.contains("SSL") || text.contains("TLS") || text.contains("handshake") { return "TLS failed: \(text)" }
        return text
    }
}
