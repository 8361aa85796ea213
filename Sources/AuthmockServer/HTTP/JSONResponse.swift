import Foundation
import HTTPTypes
import Hummingbird

/// Builds JSON responses. `Cache-Control: no-store` unless the answer says
/// otherwise: tokens and errors about tokens must never be cached (RFC 6749
/// section 5.1); a JWKS or a discovery document is cacheable, as providers send them.
enum JSONResponse {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func encode(
        _ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], encoder: JSONEncoder = encoder
    ) -> Response {
        response(bytes(value, encoder: encoder), status: status, headers: headers)
    }

    static func bytes(_ value: some Encodable, encoder: JSONEncoder = encoder) -> ByteBuffer {
        // Encoding our own Codable types cannot fail; a failure is a bug and
        // still answers with well-formed JSON.
        ByteBuffer(bytes: (try? encoder.encode(value)) ?? Data(#"{"error":"server_error"}"#.utf8))
    }

    /// A JSON answer around already encoded bytes.
    static func response(_ body: ByteBuffer, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        Response(status: status, headers: fields(headers), body: ResponseBody(byteBuffer: body))
    }

    /// A JSON answer's header fields: `headers`, and the JSON type and no caching where they say none.
    static func fields(_ headers: HTTPFields) -> HTTPFields {
        // Most answers add nothing: they share one set of fields (copy on write).
        guard !headers.isEmpty else { return plainHeaders }
        var headers = headers
        // A dialect may name its own JSON media type (application/x-amz-json-1.1).
        if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        if headers[.cacheControl] == nil { headers[.cacheControl] = "no-store" }
        if headers[.cacheControl] == "no-store", headers[.pragma] == nil { headers[.pragma] = "no-cache" }
        return headers
    }

    private static let plainHeaders: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store", .pragma: "no-cache"]

    /// For bodies whose shape is open-ended (echoed claims and request data).
    static func object(_ object: [String: Any], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data(#"{"error":"server_error"}"#.utf8)
        return response(ByteBuffer(bytes: data), status: status, headers: headers)
    }
}

extension HTTPField.Name {
    static let authmockCall = HTTPField.Name("X-Authmock-Call")!
    static let pragma = HTTPField.Name("Pragma")!
}
