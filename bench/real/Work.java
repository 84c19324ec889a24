// Work.java - a Java workload for bench/run.sh section 12 (not a test):
// string building, hashing and sorting for N rounds, JIT-compiled.
import java.util.*;

public class Work {
    static long round(int seed) {
        HashMap<String, Integer> m = new HashMap<>();
        ArrayList<String> keys = new ArrayList<>();
        long sum = 0;
        for (int i = 0; i < 2000; i++) {
            String k = Integer.toHexString((seed * 7919 + i) * 0x9E3779B1);
            m.merge(k, i, Integer::sum);
            keys.add(k);
            sum += k.hashCode() & 0xff;
        }
        Collections.sort(keys);
        for (int i = 0; i < 100; i++)
            sum += m.get(keys.get(i));
        return sum;
    }

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        long total = 0;
        for (int i = 0; i < n; i++)
            total += round(i);
        System.out.println(total);
    }
}
