import CellpathCore
import Glibc
import SystemSupport

/// The parts of the tru CLI's `tru.json` project file that cellpath uses.
struct TruJSONFile: Decodable {
    struct Credential: Decodable {
        var client_id: String?
        var client_secret: String?
    }

    var credentials: [Credential]?
    var data_residency: String?

    /// What reading a `tru.json` gave: its fields and its permission bits.
    struct Contents {
        var clientID: String
        var clientSecret: String
        var dataResidency: String?
        /// `st_mode & 0o777` of the file when it was read.
        var mode: UInt32
    }

    /// Reads and decodes `path`, named by `origin` (quoted in errors). Errors are
    /// `.configuration` (missing, malformed, no credentials) or `.permission` (unreadable);
    /// they never quote the file's content. It is opened with `identity`'s rights (default: this
    /// process's).
    static func read(
        _ path: String, namedBy origin: ConfigurationOrigin, as identity: FileIdentity? = nil
    ) throws(CellpathError) -> Contents {
        let hint = "Create it with 'tru projects:create', or fix \(origin)."
        let (bytes, mode) = try readSecretFile(path, namedBy: origin, as: identity, hint: hint)
        let file: TruJSONFile
        do {
            file = try JSONDecoding.decode(TruJSONFile.self, from: bytes)
        } catch let DecodingError.typeMismatch(_, context) {
            throw CellpathError(
                .configuration,
                "\(path): \(fieldPath(context.codingPath)) does not have the type tru.json uses",
                hint: hint)
        } catch {
            throw CellpathError(.configuration, "\(path): not valid JSON (named by \(origin))", hint: hint)
        }
        guard let first = file.credentials?.first else {
            throw CellpathError(.configuration, "\(path): no credentials[0] entry", hint: hint)
        }
        guard let clientID = first.client_id, !clientID.isEmpty else {
            throw CellpathError(.configuration, "\(path): credentials[0].client_id is missing", hint: hint)
        }
        guard let clientSecret = first.client_secret, !clientSecret.isEmpty else {
            throw CellpathError(.configuration, "\(path): credentials[0].client_secret is missing", hint: hint)
        }
        return Contents(
            clientID: clientID, clientSecret: clientSecret,
            dataResidency: file.data_residency, mode: mode)
    }

    /// `credentials[0].client_id` style path of a decoding error.
    private static func fieldPath(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text.isEmpty ? "the top level" : text
    }

    /// Reads a small regular file whole, with its permission bits taken from the same open file.
    static func readSecretFile(
        _ path: String, namedBy origin: ConfigurationOrigin, as identity: FileIdentity?,
        hint: String
    ) throws(CellpathError) -> ([UInt8], UInt32) {
        let file: FileDescriptor
        do {
            file = try (identity ?? .effective).perform { () throws(SystemError) in
                try FileDescriptor.open(path, O_RDONLY)
            }
        } catch {
            let code = error.code, reason = error.reason
            if code == EACCES || code == EPERM {
                throw CellpathError(
                    .permission, "couldn't read \(path) (named by \(origin)): \(reason)",
                    hint: "Make it readable by the user running cellpath (and by nobody else).")
            }
            throw CellpathError(.configuration, "couldn't read \(path) (named by \(origin)): \(reason)", hint: hint)
        }
        let fd = file.rawValue
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw CellpathError(.configuration, "\(path) (named by \(origin)) is not a regular file", hint: hint)
        }
        let limit = 1 << 20
        guard info.st_size <= limit else {
            throw CellpathError(.configuration, "\(path) is larger than 1 MiB", hint: hint)
        }
        guard let bytes = try? IO.readAll(fd, limit: limit) else {
            throw CellpathError(.configuration, "couldn't read \(path) (named by \(origin))", hint: hint)
        }
        return (bytes, UInt32(info.st_mode) & 0o777)
    }
}
