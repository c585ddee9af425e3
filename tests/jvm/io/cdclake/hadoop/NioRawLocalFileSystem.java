package io.cdclake.hadoop;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system, with the two calls that start a process done in Java instead.
 *
 * <p>Without Hadoop's native library (pip's pyspark has none), RawLocalFileSystem runs
 * {@code chmod} for every file and folder it creates and {@code readlink} for every rename
 * through FileContext (Delta's commits): about 90 processes for two small batches of one table.
 * Files and permissions come out the same; only the process per call goes.
 */
public class NioRawLocalFileSystem extends RawLocalFileSystem {
  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    if (permission.getStickyBit()) { // not expressible in PosixFilePermission
      super.setPermission(p, permission);
      return;
    }
    String mode = permission.getUserAction().SYMBOL + permission.getGroupAction().SYMBOL
        + permission.getOtherAction().SYMBOL;
    Files.setPosixFilePermissions(pathToFile(p).toPath(), PosixFilePermissions.fromString(mode));
  }

  /** A symbolic link goes to Hadoop's own code; anything else is its file status, which is
   * what Hadoop's gives after {@code readlink} found no link. */
  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    if (Files.isSymbolicLink(pathToFile(f).toPath())) {
      return super.getFileLinkStatus(f);
    }
    return getFileStatus(f);
  }
}
