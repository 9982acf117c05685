/// cellpath's version, shown by `--version` and in `User-Agent: cellpath/<version>`.
public enum CellpathVersion {
    public static let current = "0.1.0"
    public static var userAgent: String { "cellpath/\(current)" }
}
